package connector_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// suffixTransform appends its suffix to the event's type.
type suffixTransform struct{ suffix string }

func (s suffixTransform) Apply(_ context.Context, e *event.Event) ([]*event.Event, error) {
	c := e.Clone()
	c.SetType(e.Type() + s.suffix)
	return []*event.Event{&c}, nil
}

func suffixPlugin() connector.TransformPlugin {
	return connector.TransformPlugin{
		Name: "suffix",
		Spec: connector.Spec{
			{Name: "suffix", Type: connector.TypeString, Required: true},
			{Name: "times", Type: connector.TypeInt, Default: "1", Min: connector.Min(1)},
		},
		New: func(cfg connector.Values, _ connector.Env) (connector.Transform, error) {
			if strings.Contains(cfg.String("suffix"), " ") {
				return nil, connector.FieldErrors{{Key: "suffix", Message: "must not contain spaces"}}
			}
			if cfg.String("suffix") == "boom" {
				return nil, errors.New("cannot build")
			}
			return suffixTransform{suffix: strings.Repeat(cfg.String("suffix"), int(cfg.Int("times")))}, nil
		},
	}
}

func TestRegisterTransform(t *testing.T) {
	t.Parallel()
	r := connector.NewRegistry()
	require.NoError(t, r.RegisterTransform(suffixPlugin()))
	assert.Error(t, r.RegisterTransform(suffixPlugin()), "names are unique")
	assert.Error(t, r.RegisterTransform(connector.TransformPlugin{Name: "x"}), "a transform needs a constructor")
	assert.Error(t, r.RegisterTransform(connector.TransformPlugin{New: suffixPlugin().New}), "a transform needs a name")
	require.NoError(t, r.RegisterTransform(connector.TransformPlugin{Name: "a", New: suffixPlugin().New}))
	var names []string
	for _, p := range r.TransformPlugins() {
		names = append(names, p.Name)
	}
	assert.Equal(t, []string{"a", "suffix"}, names)

	clone := r.Clone()
	require.NoError(t, clone.RegisterTransform(connector.TransformPlugin{Name: "z", New: suffixPlugin().New}))
	_, inClone := clone.LookupTransform("z")
	_, inOriginal := r.LookupTransform("z")
	assert.True(t, inClone)
	assert.False(t, inOriginal, "a clone is independent")
}

func TestTransforms(t *testing.T) {
	t.Parallel()
	r := connector.NewRegistry()
	require.NoError(t, r.RegisterTransform(suffixPlugin()))
	tests := []struct {
		name     string
		cfg      map[string]string
		wantKeys []string // problems; nil = valid
		wantType string   // the type of the test event after every transform
	}{
		{"none", map[string]string{}, nil, "t"},
		{"empty list", map[string]string{"transforms": " "}, nil, "t"},
		{"one", map[string]string{"transforms": "a", "transforms.a.type": "suffix", "transforms.a.suffix": "-x"}, nil, "t-x"},
		{"in the listed order", map[string]string{"transforms": "b, a",
			"transforms.a.type": "suffix", "transforms.a.suffix": "-a", "transforms.a.times": "2",
			"transforms.b.type": "suffix", "transforms.b.suffix": "-b"}, nil, "t-b-a-a"},
		{"a configured transform not listed is not applied", map[string]string{"transforms": "a",
			"transforms.a.type": "suffix", "transforms.a.suffix": "-a",
			"transforms.b.type": "nope"}, nil, "t-a"},
		{"type missing", map[string]string{"transforms": "a"}, []string{"transforms.a.type"}, ""},
		{"unknown type", map[string]string{"transforms": "a", "transforms.a.type": "nope"}, []string{"transforms.a.type"}, ""},
		{"listed twice", map[string]string{"transforms": "a,a", "transforms.a.type": "suffix", "transforms.a.suffix": "x"},
			[]string{"transforms"}, ""},
		{"bad names", map[string]string{"transforms": "a,,b.c", "transforms.a.type": "suffix", "transforms.a.suffix": "x"},
			[]string{"transforms", "transforms"}, ""},
		{"spec problems name the full key", map[string]string{"transforms": "a", "transforms.a.type": "suffix", "transforms.a.times": "0"},
			[]string{"transforms.a.suffix", "transforms.a.times"}, ""},
		{"constructor field errors name the full key", map[string]string{"transforms": "a", "transforms.a.type": "suffix", "transforms.a.suffix": "a b"},
			[]string{"transforms.a.suffix"}, ""},
		{"other constructor errors are of the type", map[string]string{"transforms": "a", "transforms.a.type": "suffix", "transforms.a.suffix": "boom"},
			[]string{"transforms.a.type"}, ""},
		{"every transform's problems", map[string]string{"transforms": "a,b", "transforms.a.type": "nope", "transforms.b.type": "suffix"},
			[]string{"transforms.a.type", "transforms.b.suffix"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, errs := r.Transforms(tt.cfg, connector.Env{})
			if tt.wantKeys != nil {
				var keys []string
				for _, e := range errs {
					keys = append(keys, e.Key)
				}
				assert.Equal(t, tt.wantKeys, keys, "%v", errs)
				assert.Nil(t, ts)
				return
			}
			require.Empty(t, errs)
			e := event.New()
			e.SetType("t")
			cur := &e
			for _, tr := range ts {
				out, err := tr.Apply(context.Background(), cur)
				require.NoError(t, err)
				require.Len(t, out, 1)
				cur = out[0]
			}
			assert.Equal(t, tt.wantType, cur.Type())
			assert.Equal(t, "t", e.Type(), "the input is not modified")
		})
	}
}

// Validating a connector config validates its transforms too, with the plugin's own keys.
func TestValidateChecksTransforms(t *testing.T) {
	t.Parallel()
	r := connector.NewRegistry()
	require.NoError(t, r.Register(connector.Plugin{Name: "b", Type: connector.TypeSink, NewSink: newNop,
		Spec: connector.Spec{{Name: "b.key", Type: connector.TypeString, Required: true}}}))
	require.NoError(t, r.RegisterTransform(suffixPlugin()))
	cfg := map[string]string{connector.KeyClass: "b", connector.KeyTopics: "t", connector.KeyStream: "S", connector.KeyDurable: "D",
		"transforms": "a", "transforms.a.type": "suffix"}
	_, errs := r.Validate(cfg, connector.Env{})
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key)
	}
	assert.Equal(t, []string{"b.key", "transforms.a.suffix"}, keys)

	cfg["b.key"], cfg["transforms.a.suffix"] = "v", "-x"
	_, errs = r.Validate(cfg, connector.Env{})
	assert.Empty(t, errs)
}
