package connector_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

var testSpec = connector.Spec{
	{Name: "s", Type: connector.TypeString, Required: true},
	{Name: "i", Type: connector.TypeInt, Default: "7", Min: connector.Min(1)},
	{Name: "d", Type: connector.TypeDuration, Default: "5s"},
	{Name: "b", Type: connector.TypeBool, Default: "true"},
	{Name: "j", Type: connector.TypeJSON, Default: `{"a":1}`},
	{Name: "e", Type: connector.TypeEnum, Default: "x", Enum: []string{"x", "y"}},
	{Name: "c", Type: connector.TypeString, Check: func(v string) error {
		if v != "ok" {
			return errors.New("must be ok")
		}
		return nil
	}},
}

func TestSpecValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  map[string]string
		want []connector.FieldError
	}{
		{"defaults suffice", map[string]string{"s": "v"}, nil},
		{"every type valid", map[string]string{"s": "v", "i": "3", "d": "150ms", "b": "false", "j": `[1,2]`, "e": "y", "c": "ok"}, nil},
		{"unknown keys are ignored", map[string]string{"s": "v", "transforms": "t1"}, nil},
		{"required missing", map[string]string{}, []connector.FieldError{{Key: "s", Message: "is required"}}},
		{"required empty", map[string]string{"s": ""}, []connector.FieldError{{Key: "s", Message: "is required"}}},
		{"every problem named", map[string]string{"i": "x", "d": "5", "b": "yes", "j": "{", "e": "z", "c": "no"},
			[]connector.FieldError{
				{Key: "s", Message: "is required"},
				{Key: "i", Message: `"x" is not an integer`},
				{Key: "d", Message: `"5" is not a duration (like 500ms, 5s, 1m)`},
				{Key: "b", Message: `"yes" is not true or false`},
				{Key: "j", Message: "is not valid JSON"},
				{Key: "e", Message: `"z" is not one of x, y`},
				{Key: "c", Message: "must be ok"},
			}},
		{"below minimum", map[string]string{"s": "v", "i": "0"}, []connector.FieldError{{Key: "i", Message: "0 is less than the minimum 1"}}},
		{"negative duration", map[string]string{"s": "v", "d": "-1s"}, []connector.FieldError{{Key: "d", Message: "must not be negative"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := testSpec.Validate(tt.cfg)
			assert.Equal(t, connector.FieldErrors(tt.want), got)
		})
	}
}

func TestSinkSpecValidate(t *testing.T) {
	t.Parallel()
	valid := func() map[string]string {
		return map[string]string{
			connector.KeyClass: "http", connector.KeyTopics: "eb.bus.b1.rule.r1",
			connector.KeyStream: "eb_BUS_b1", connector.KeyDurable: "eb_r1_t1",
		}
	}
	tests := []struct {
		name    string
		key     string
		value   string
		wantKey string // "" = valid
	}{
		{"valid", "", "", ""},
		{"tasks.max zero", connector.KeyTasksMax, "0", connector.KeyTasksMax},
		{"retries negative", connector.KeyRetryMaxAttempts, "-1", connector.KeyRetryMaxAttempts},
		{"retries zero", connector.KeyRetryMaxAttempts, "0", ""},
		{"timeout unbounded", connector.KeyRetryTimeout, "-1", ""},
		{"timeout below -1", connector.KeyRetryTimeout, "-2", connector.KeyRetryTimeout},
		{"tolerance unknown", connector.KeyErrorsTolerance, "some", connector.KeyErrorsTolerance},
		{"deliver policy new", connector.KeyDeliverPolicy, "new", ""},
		{"deliver policy last", connector.KeyDeliverPolicy, "last", connector.KeyDeliverPolicy},
		{"durable with a dot", connector.KeyDurable, "a.b", connector.KeyDurable},
		{"stream with a space", connector.KeyStream, "a b", connector.KeyStream},
		{"topic with empty token", connector.KeyTopics, "a..b", connector.KeyTopics},
		{"topic wildcard", connector.KeyTopics, "eb.bus.*.in", ""},
		{"topics missing", connector.KeyTopics, "", connector.KeyTopics},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := valid()
			if tt.key != "" {
				cfg[tt.key] = tt.value
			}
			errs := connector.SinkSpec().Validate(cfg)
			if tt.wantKey == "" {
				assert.Empty(t, errs)
				return
			}
			require.Len(t, errs, 1)
			assert.Equal(t, tt.wantKey, errs[0].Key)
		})
	}
}

func TestValues(t *testing.T) {
	t.Parallel()
	v := testSpec.Values(map[string]string{"s": "str", "i": "42", "d": "", "other": "raw"})
	assert.Equal(t, "str", v.String("s"))
	assert.Equal(t, int64(42), v.Int("i"))
	assert.Equal(t, 5*time.Second, v.Duration("d"), "empty reads as the default")
	assert.True(t, v.Bool("b"))
	assert.Equal(t, "x", v.String("e"))
	assert.Equal(t, "raw", v.String("other"))

	var obj map[string]int
	require.NoError(t, v.JSON("j", &obj))
	assert.Equal(t, map[string]int{"a": 1}, obj)

	var wrong []string
	err := v.JSON("j", &wrong)
	var fe connector.FieldErrors
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "j", fe[0].Key)

	untouched := []string{"keep"}
	require.NoError(t, v.JSON("nothing", &untouched))
	assert.Equal(t, []string{"keep"}, untouched)
}

func TestFieldErrorsMessage(t *testing.T) {
	t.Parallel()
	err := connector.FieldErrors{{Key: "url", Message: "is required"}, {Key: "mode", Message: "bad"}}
	assert.Equal(t, "connector configuration is invalid and contains 2 error(s): url: is required; mode: bad", err.Error())
}

type nopSink struct{ closed bool }

func (s *nopSink) Connect(context.Context) error                     { return nil }
func (s *nopSink) Write(context.Context, *event.Event) error         { return nil }
func (s *nopSink) Close() error                                      { s.closed = true; return nil }
func newNop(connector.Values, connector.Env) (connector.Sink, error) { return &nopSink{}, nil }

func TestRegistry(t *testing.T) {
	t.Parallel()
	r := connector.NewRegistry()
	require.NoError(t, r.Register(connector.Plugin{Name: "b", Type: connector.TypeSink, NewSink: newNop}))
	require.NoError(t, r.Register(connector.Plugin{Name: "a", Type: connector.TypeSink, NewSink: newNop,
		Spec: connector.Spec{{Name: "a.key", Type: connector.TypeInt, Required: true}}}))
	assert.Error(t, r.Register(connector.Plugin{Name: "a", Type: connector.TypeSink, NewSink: newNop}), "names are unique")
	assert.Error(t, r.Register(connector.Plugin{Name: "c", Type: connector.TypeSink}), "a sink needs a constructor")
	assert.Error(t, r.Register(connector.Plugin{Type: connector.TypeSink, NewSink: newNop}), "a plugin needs a name")

	var names []string
	for _, p := range r.Plugins() {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"a", "b"}, names)

	clone := r.Clone()
	require.NoError(t, clone.Register(connector.Plugin{Name: "z", Type: connector.TypeSink, NewSink: newNop}))
	_, inClone := clone.Lookup("z")
	_, inOriginal := r.Lookup("z")
	assert.True(t, inClone)
	assert.False(t, inOriginal, "a clone is independent")

	base := map[string]string{connector.KeyTopics: "t", connector.KeyStream: "S", connector.KeyDurable: "D"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name     string
		cfg      map[string]string
		wantKeys []string
	}{
		{"valid", with(connector.KeyClass, "b"), nil},
		{"class missing", with(), []string{connector.KeyClass}},
		{"unknown plugin", with(connector.KeyClass, "nope"), []string{connector.KeyClass}},
		{"plugin key and common key", with(connector.KeyClass, "a", connector.KeyTasksMax, "0"),
			[]string{connector.KeyTasksMax, "a.key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errs := r.Validate(tt.cfg, connector.Env{})
			var keys []string
			for _, e := range errs {
				keys = append(keys, e.Key)
			}
			assert.Equal(t, tt.wantKeys, keys, fmt.Sprint(errs))
		})
	}
	_, errs := r.Validate(with(connector.KeyClass, "nope"), connector.Env{})
	assert.Contains(t, errs[0].Message, `unknown plugin "nope"`)
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	base := errors.New("bad request")
	p := connector.Permanent(base)
	assert.True(t, connector.IsPermanent(p))
	assert.True(t, connector.IsPermanent(fmt.Errorf("wrapped: %w", p)))
	assert.ErrorIs(t, p, base)
	assert.False(t, connector.IsPermanent(base))
	assert.NoError(t, connector.Permanent(nil))
}

func TestMeta(t *testing.T) {
	t.Parallel()
	_, ok := connector.MetaFrom(context.Background())
	assert.False(t, ok)
	m := connector.Meta{Stream: "S", Sequence: 12, Attempt: 2}
	got, ok := connector.MetaFrom(connector.WithMeta(context.Background(), m))
	require.True(t, ok)
	assert.Equal(t, m, got)
	assert.Equal(t, "S:12", got.ID(), "without Nats-Msg-Id the id is stream:sequence")
	got.MsgID = "abc"
	assert.Equal(t, "abc", got.ID())
}

// TestWithWrite: the one value of a write answers as WithMeta, WithReport and WithBatch do, a value put on top of
// it wins, other keys and the parent's cancellation reach through, and it is one allocation.
func TestWithWrite(t *testing.T) { // not parallel: AllocsPerRun
	type otherKey struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), otherKey{}, "v"))
	m := connector.Meta{Stream: "S", Sequence: 12, Attempt: 2, JSON: []byte(`{}`)}

	ctx, report := connector.WithWrite(parent, m, nil)
	got, ok := connector.MetaFrom(ctx)
	require.True(t, ok)
	assert.Equal(t, m, got)
	_, ok = connector.BatchFrom(ctx)
	assert.False(t, ok, "no Batch given")
	connector.ReportRoutedTo(ctx, []string{"r1"})
	assert.Equal(t, connector.RecordStats{Matched: 1, Routed: 1}, report.Stats(), "what the sink reports reaches the Report returned")
	assert.Equal(t, "v", ctx.Value(otherKey{}), "other keys are the parent's")

	var b connector.Batch
	withBatch, _ := connector.WithWrite(parent, m, &b)
	gotBatch, ok := connector.BatchFrom(withBatch)
	require.True(t, ok)
	assert.Same(t, &b, gotBatch)

	written := m
	written.JSON = nil
	got, _ = connector.MetaFrom(connector.WithMeta(ctx, written))
	assert.Nil(t, got.JSON, "WithMeta on top of it wins")
	inner := new(connector.Report)
	connector.ReportMatched(connector.WithReport(ctx, inner), 0)
	assert.Equal(t, uint64(1), inner.Stats().Unmatched)
	assert.Equal(t, uint64(0), report.Stats().Unmatched, "WithReport on top of it wins")

	child, stop := context.WithTimeout(ctx, time.Hour)
	defer stop()
	cancel()
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the parent's cancellation did not reach a child of the write's ctx")
	}
	assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { kept, _ = connector.WithWrite(parent, m, &b) }), 1.0)
}

var kept context.Context // what TestWithWrite makes, kept so that it is made on the heap as the runtime's is
