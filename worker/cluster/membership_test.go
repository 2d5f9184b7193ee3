package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/cluster"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

const (
	testHeartbeat = 100 * time.Millisecond
	testExpiry    = 600 * time.Millisecond
)

func join(t *testing.T, js jetstream.JetStream, id string) (*cluster.Membership, cluster.Member) {
	t.Helper()
	self := cluster.Member{
		ID: id, URL: "http://" + id + ":8083", Version: "v1.2.3", Started: time.Now().UTC().Truncate(time.Millisecond),
	}
	m, err := cluster.Join(context.Background(), cluster.MembershipConfig{
		JetStream: js, Names: testNames, Self: self, Heartbeat: testHeartbeat, Expiry: testExpiry,
	})
	require.NoError(t, err)
	t.Cleanup(func() { cluster.StopHeartbeat(m) })
	return m, self
}

func TestMembershipConfigValidate(t *testing.T) {
	t.Parallel()
	js := jetstreamtest.Start(t).JS
	self := cluster.Member{ID: "w1"}
	cases := []struct {
		name string
		cfg  cluster.MembershipConfig
		ok   bool
	}{
		{"defaults", cluster.MembershipConfig{JetStream: js, Self: self}, true},
		{"dotted id", cluster.MembershipConfig{JetStream: js, Self: cluster.Member{ID: "host.example.com-1"}}, true},
		{"no JetStream", cluster.MembershipConfig{Self: self}, false},
		{"no id", cluster.MembershipConfig{JetStream: js}, false},
		{"id with a space", cluster.MembershipConfig{JetStream: js, Self: cluster.Member{ID: "w 1"}}, false},
		{"id with a wildcard", cluster.MembershipConfig{JetStream: js, Self: cluster.Member{ID: "w*"}}, false},
		{"heartbeat not under expiry", cluster.MembershipConfig{JetStream: js, Self: self, Heartbeat: 2 * time.Second}, false},
		{"expiry under the server minimum", cluster.MembershipConfig{JetStream: js, Self: self, Heartbeat: 10 * time.Millisecond, Expiry: 50 * time.Millisecond}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok {
				assert.NoError(t, err)
			} else {
				assert.Error(t, err)
			}
		})
	}
}

func TestJoinBucketConfig(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	join(t, env.JS, "w1")
	st, err := bucket(t, env.JS, cluster.MembersBucketPurpose).Status(context.Background())
	require.NoError(t, err)
	assert.Equal(t, testExpiry, st.TTL(), "max age of the bucket")
}

func TestLiveListsJoinedMembersAndLeaveRemovesAtOnce(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	// Two workers on their own connections, joining in reverse id order.
	m2, self2 := join(t, env.JS, "w2")
	other, err := jetstream.New(jetstreamtest.Connect(t, env.Server))
	require.NoError(t, err)
	m1, self1 := join(t, other, "w1")

	// Beyond the expiry: the heartbeats keep both alive.
	time.Sleep(2 * testExpiry)
	for _, m := range []*cluster.Membership{m1, m2} {
		live, err := m.Live(ctx)
		require.NoError(t, err)
		require.Len(t, live, 2)
		assert.Equal(t, self1.ID, live[0].ID, "sorted by id")
		assert.Equal(t, self1.URL, live[0].URL)
		assert.Equal(t, self1.Version, live[0].Version)
		assert.True(t, self1.Started.Equal(live[0].Started))
		assert.Equal(t, self2.ID, live[1].ID)
	}

	require.NoError(t, m2.Leave(ctx))
	_, err = bucket(t, env.JS, cluster.MembersBucketPurpose).Get(ctx, "w2")
	require.ErrorIs(t, err, jetstream.ErrKeyNotFound, "Leave deletes the key at once")
	// The other worker's view learns of the deletion from its watcher (the delete, not the expiry, removes it: the
	// key is gone from the bucket already).
	var live []cluster.Member
	require.Eventually(t, func() bool {
		live, err = m1.Live(ctx)
		return err == nil && len(live) == 1
	}, 10*time.Second, 10*time.Millisecond)
	assert.Equal(t, "w1", live[0].ID)
	assert.False(t, live[0].LastHeartbeat.Before(live[0].Started), "the last heartbeat follows the start")

	// No heartbeat brings it back.
	time.Sleep(3 * testHeartbeat)
	_, err = bucket(t, env.JS, cluster.MembersBucketPurpose).Get(ctx, "w2")
	require.ErrorIs(t, err, jetstream.ErrKeyNotFound)
}

// A worker that stops heartbeating without leaving (crashed, cut off from NATS) disappears by itself: the server
// removes its key about Expiry after its last heartbeat.
func TestMemberExpiresWithoutLeave(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	m, _ := join(t, env.JS, "w1")
	kv := bucket(t, env.JS, cluster.MembersBucketPurpose)

	time.Sleep(2 * testExpiry)
	_, err := kv.Get(ctx, "w1")
	require.NoError(t, err, "heartbeats keep the key past Expiry")

	cluster.StopHeartbeat(m)
	last, err := kv.Get(ctx, "w1")
	require.NoError(t, err)
	lo, hi := checkExpiry(t, kv, "w1", last.Created(), testExpiry)
	t.Logf("member key (Expiry %v) vanished between %v and %v after its last heartbeat", testExpiry, lo, hi)
	assert.GreaterOrEqual(t, hi, testExpiry, "vanished before Expiry")

	live, err := m.Live(ctx)
	require.NoError(t, err)
	assert.Empty(t, live)
}

// A key of the members bucket that does not hold a member of its name (not JSON, or another worker's id) is not
// listed; the members around it are.
func TestLiveSkipsWhatIsNotAMember(t *testing.T) {
	t.Parallel()
	env := jetstreamtest.Start(t)
	ctx := context.Background()
	m, self := join(t, env.JS, "w1")
	kv := bucket(t, env.JS, cluster.MembersBucketPurpose)
	require.Eventually(t, func() bool {
		// Each key is written again as a heartbeat would, so that none expires however slow the machine.
		for key, value := range map[string]string{"w0": "not json", "w2": `{"id":"w3","url":"http://w3:8083"}`,
			"w4": `{"id":"w4","url":"http://w4:8083"}`} {
			_, err := kv.Put(ctx, key, []byte(value))
			require.NoError(t, err)
		}
		live, err := m.Live(ctx)
		require.NoError(t, err)
		var ids []string
		for _, mem := range live {
			ids = append(ids, mem.ID)
		}
		return assert.ObjectsAreEqual([]string{self.ID, "w4"}, ids)
	}, 5*time.Second, 10*time.Millisecond)
}
