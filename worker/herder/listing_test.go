package herder

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/maphash"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// A listing of every connector is answered from its kept encoding while nothing changes, and is what a listing
// built afresh says after each change: a task's counters, a pause, a deletion (at once, before the watcher sees
// it), a new connector.
func TestListingKeptWhileNothingChanges(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	names := stream.Names{Cluster: "ls"}
	require.NoError(t, names.EnsureBusStream(context.Background(), env.JS, "b1", time.Hour, -1, 1))
	h := startHerder(t, names, "w1", env)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, rule := range []string{"r1", "r2"} {
		_, err := h.Create(ctx, "ls."+rule, logConfig(names, rule), "")
		require.NoError(t, err)
	}
	listing := func() []byte {
		b, _, err := h.ExpandedJSON(true, true, "", "")
		require.NoError(t, err)
		return b
	}
	tag := func() string {
		b, etag, err := h.ExpandedJSON(true, true, "", "")
		require.NoError(t, err)
		require.NotNil(t, b)
		require.NotEmpty(t, etag)
		return etag
	}
	fresh := func() []byte {
		b, err := encodeListing(h.Expanded(true, true, ""))
		require.NoError(t, err)
		return b
	}
	tasks := func(b []byte, name string) []rpc.TaskState {
		var all map[string]rpc.ConnectorExpanded
		require.NoError(t, json.Unmarshal(b, &all))
		c, ok := all[name]
		if !ok || c.Status == nil {
			return nil
		}
		return c.Status.Tasks
	}

	// settled waits until the kept listing says what ok wants and is what a fresh one says, twice in a row.
	settled := func(msg string, ok func([]byte) bool) []byte {
		var got []byte
		require.Eventually(t, func() bool {
			got = listing()
			return ok(got) && bytes.Equal(got, fresh()) && bytes.Equal(listing(), got)
		}, 10*time.Second, 20*time.Millisecond, msg)
		return got
	}
	running := func(name string) func([]byte) bool {
		return func(b []byte) bool {
			ts := tasks(b, name)
			return len(ts) == 1 && ts[0].State == rpc.StateRunning
		}
	}

	before := settled("the listing settles", running("ls.r1"))
	again := listing()
	require.NotEmpty(t, again)
	assert.Same(t, &before[0], &again[0], "nothing changed: the kept encoding is answered")
	assert.Len(t, tasks(before, "ls.r1"), 1)
	was := tag()
	body, etag, err := h.ExpandedJSON(true, true, "", was)
	require.NoError(t, err)
	assert.Nil(t, body, "nothing changed: the caller's copy is current")
	assert.Equal(t, was, etag)
	body, etag, err = h.ExpandedJSON(false, true, "", was)
	require.NoError(t, err)
	assert.NotNil(t, body, "another kind of listing never has the tag")
	assert.NotEqual(t, was, etag)
	body, etag, err = h.ExpandedJSON(true, true, "ls.r1", was)
	require.NoError(t, err)
	assert.NotNil(t, body, "a listing by prefix has no tag")
	assert.Empty(t, etag)

	env.Publish(t, names.RuleSubject("b1", "r1"), jetstreamtest.Event("e1", "t", map[string]any{"n": 1}))
	settled("a task's counters changed", func(b []byte) bool {
		ts := tasks(b, "ls.r1")
		return len(ts) == 1 && ts[0].Counters != nil && ts[0].Counters.Written == 1
	})
	body, etag, err = h.ExpandedJSON(true, true, "", was)
	require.NoError(t, err)
	assert.NotNil(t, body, "a changed listing is answered whole to a caller with the old tag")
	assert.NotEqual(t, was, etag)

	require.NoError(t, h.Pause(ctx, "ls.r2"))
	settled("a connector paused", func(b []byte) bool {
		ts := tasks(b, "ls.r2")
		return len(ts) == 1 && ts[0].State == rpc.StatePaused
	})

	require.NoError(t, h.Delete(ctx, "ls.r2"))
	var all map[string]rpc.ConnectorExpanded
	require.NoError(t, json.Unmarshal(listing(), &all))
	assert.NotContains(t, all, "ls.r2", "a deleted connector is gone from the next listing")

	_, err = h.Create(ctx, "ls.r3", logConfig(names, "r3"), "")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(listing(), &all))
	assert.Contains(t, all, "ls.r3", "a new connector is in the next listing")
	settled("and the listing settles again", running("ls.r3"))
}

// The stamp digests a task's health field by field: each field, set alone, changes the digest, so a field added
// to delivery.Health or delivery.Failure without being digested fails here.
func TestStampDigestsEveryHealthField(t *testing.T) {
	digest := func(hl delivery.Health) uint64 {
		var d maphash.Hash
		d.SetSeed(stampSeed)
		writeHealth(&d, hl)
		return d.Sum64()
	}
	set := func(f reflect.Value) {
		switch f.Kind() {
		case reflect.Uint64, reflect.Uint, reflect.Uint32:
			f.SetUint(7)
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("x")
		case reflect.Struct:
			f.Set(reflect.ValueOf(time.Unix(7, 0)))
		default:
			t.Fatalf("a field of kind %s: teach this test and writeHealth", f.Kind())
		}
	}
	zero := digest(delivery.Health{})
	ht := reflect.TypeFor[delivery.Health]()
	for i := range ht.NumField() {
		var hl delivery.Health
		f := reflect.ValueOf(&hl).Elem().Field(i)
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
		} else {
			set(f)
		}
		assert.NotEqual(t, zero, digest(hl), "Health.%s is not digested", ht.Field(i).Name)
	}
	withFailure := digest(delivery.Health{LastFailure: &delivery.Failure{}})
	ft := reflect.TypeFor[delivery.Failure]()
	for i := range ft.NumField() {
		var fl delivery.Failure
		set(reflect.ValueOf(&fl).Elem().Field(i))
		assert.NotEqual(t, withFailure, digest(delivery.Health{LastFailure: &fl}), "Failure.%s is not digested", ft.Field(i).Name)
	}
}

// The stamp digests a task's totals field by field: each field of rpc.TaskCounters, set alone, changes the digest,
// so a field added to it without being digested fails here.
func TestStampDigestsEveryCounter(t *testing.T) {
	digest := func(c rpc.TaskCounters) uint64 {
		var d maphash.Hash
		d.SetSeed(stampSeed)
		writeCounters(&d, &c)
		return d.Sum64()
	}
	zero := digest(rpc.TaskCounters{})
	ct := reflect.TypeFor[rpc.TaskCounters]()
	for i := range ct.NumField() {
		var c rpc.TaskCounters
		switch f := reflect.ValueOf(&c).Elem().Field(i); f.Kind() {
		case reflect.Uint64:
			f.SetUint(7)
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]uint64{"r1": 7}))
		default:
			t.Fatalf("TaskCounters.%s of kind %s: teach this test and writeCounters", ct.Field(i).Name, f.Kind())
		}
		assert.NotEqual(t, zero, digest(c), "TaskCounters.%s is not digested", ct.Field(i).Name)
	}
}

// statusStamps returns a function that reads the stamp of h's listing of statuses.
func statusStamps(t *testing.T, h *Herder) func() uint64 {
	return func() uint64 {
		t.Helper()
		s, ok := h.listingStamp(true)
		require.True(t, ok)
		return s
	}
}

// fakeRunner reports what the test sets.
type fakeRunner struct {
	state, trace string
	n            delivery.Counters
	hl           delivery.Health
	routes       map[string]uint64
}

func (f *fakeRunner) State() (string, string)        { return f.state, f.trace }
func (f *fakeRunner) Counters() delivery.Counters    { return f.n }
func (f *fakeRunner) Health() delivery.Health        { return f.hl }
func (f *fakeRunner) RoutedTo() map[string]uint64    { return f.routes }
func (f *fakeRunner) Asleep() (uint64, bool)         { return 0, false }
func (f *fakeRunner) Abort()                         {}
func (f *fakeRunner) Stop(ctx context.Context) error { return nil }

// Each thing a local task reports changes the stamp of a status listing, alone: its state and trace, each counter,
// its health, its routes, its totals so far; and so do the records, the stored statuses and the live workers.
func TestListingStampSeesEveryChange(t *testing.T) {
	run := &fakeRunner{state: rpc.StateRunning}
	lt := &localTask{id: rpc.TaskID{Connector: "c", Task: 0}, run: run}
	h := &Herder{state: &stateKV{}, local: map[rpc.TaskID]*localTask{lt.id: lt}}
	stamp := statusStamps(t, h)
	last := stamp()
	changed := func(what string) {
		t.Helper()
		now := stamp()
		assert.NotEqual(t, last, now, "%s did not change the stamp", what)
		last = now
		assert.Equal(t, last, stamp(), "the stamp is the same while nothing changes")
	}
	run.state = rpc.StateFailed
	changed("the state")
	run.trace = "boom"
	changed("the trace")
	nt := reflect.TypeFor[delivery.Counters]()
	for i := range nt.NumField() {
		reflect.ValueOf(&run.n).Elem().Field(i).SetUint(uint64(i + 1))
		changed("counter " + nt.Field(i).Name)
	}
	run.hl.FailuresSinceSuccess = 3
	changed("the health")
	run.routes = map[string]uint64{"r1": 1}
	changed("the routes")
	run.routes = map[string]uint64{"r1": 2}
	changed("a route's count")
	lt.base = &rpc.TaskCounters{Written: 5}
	changed("the totals read")
	lt.carried.RoutedTo = map[string]uint64{"r1": 1}
	changed("the totals carried")
	lt.releasing = true
	changed("a release")
	h.changes++
	changed("a record")
	h.state.changes++
	changed("a stored status")
	h.live = append(h.live, cluster.Member{ID: "w2"})
	changed("a live worker")
	h.local[rpc.TaskID{Connector: "c", Task: 1}] = &localTask{id: rpc.TaskID{Connector: "c", Task: 1}}
	changed("a task taken")

	info, ok := h.listingStamp(false)
	require.True(t, ok)
	run.n.Written++
	again, _ := h.listingStamp(false)
	assert.Equal(t, info, again, "a listing of configs does not depend on tasks")
}

// A runner that stays parked is not read again by the stamps of status listings: its digest is kept while Asleep
// answers the same. One that woke (another count), or that is awake, is read at every stamp.
func TestStampKeepsTheDigestOfAParkedRunner(t *testing.T) {
	run := &sleepyRunner{fakeRunner: fakeRunner{state: rpc.StateRunning}, parks: 1, asleep: true}
	lt := &localTask{id: rpc.TaskID{Connector: "c", Task: 0}, run: run}
	h := &Herder{state: &stateKV{}, local: map[rpc.TaskID]*localTask{lt.id: lt}}
	stamp := statusStamps(t, h)
	first := stamp()
	reads := run.reads.Load()
	assert.Equal(t, first, stamp())
	assert.Equal(t, reads, run.reads.Load(), "parked since the last stamp: not read")

	run.parks, run.n.Written = 2, 5 // woke, wrote, parked again
	second := stamp()
	assert.NotEqual(t, first, second, "another count of parks: read")
	assert.Equal(t, reads+1, run.reads.Load())

	run.asleep = false
	stamp()
	stamp()
	assert.Equal(t, reads+3, run.reads.Load(), "awake: read at every stamp")
	run.n.Written = 6
	assert.NotEqual(t, second, stamp())
}
