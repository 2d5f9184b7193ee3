package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
)

// The topics key holds one subject or several, comma-separated: one is the consumer's FilterSubject, several
// are its FilterSubjects.
func TestConfigTopics(t *testing.T) {
	t.Parallel()
	base := map[string]string{connector.KeyClass: "log", connector.KeyStream: "S", connector.KeyDurable: "d"}
	tests := []struct {
		name       string
		topics     string
		wantErr    bool
		wantFilter string
		wantList   []string
	}{
		{name: "one subject", topics: "eb.bus.b1.rule.r1", wantFilter: "eb.bus.b1.rule.r1"},
		{name: "two subjects", topics: "eb.bus.b1.rule.r1,eb.bus.b1.redrive.r1.t1",
			wantList: []string{"eb.bus.b1.rule.r1", "eb.bus.b1.redrive.r1.t1"}},
		{name: "wildcards in a list", topics: "a.*,b.>", wantList: []string{"a.*", "b.>"}},
		{name: "empty entry", topics: "a,,b", wantErr: true},
		{name: "trailing comma", topics: "a,", wantErr: true},
		{name: "space after the comma", topics: "a, b", wantErr: true},
		{name: "a subject twice", topics: "a,a", wantErr: true},
		{name: "empty token in an entry", topics: "a,b..c", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := map[string]string{connector.KeyTopics: tt.topics}
			for k, v := range base {
				cfg[k] = v
			}
			spec := connector.SinkSpec()
			errs := spec.Validate(cfg)
			if tt.wantErr {
				require.Len(t, errs, 1)
				assert.Equal(t, connector.KeyTopics, errs[0].Key)
				return
			}
			require.Empty(t, errs)
			c := delivery.ParseConfig(spec.Values(cfg))
			cc := c.ConsumerConfig(time.Minute)
			assert.Equal(t, tt.wantFilter, cc.FilterSubject)
			assert.Equal(t, tt.wantList, cc.FilterSubjects)
		})
	}
}

// A consumer whose one subject becomes two (a target connector that starts reading its redrive subject) is
// updated in place: it keeps its position and start policy, delivers what follows on both subjects, and goes
// back to one subject the same way.
func TestEnsureConsumerChangesSubjectsInPlace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	f.env.PublishN(t, "s.in", "before", 3)
	f.cfg.DeliverPolicy = jetstream.DeliverNewPolicy
	cons, err := delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, time.Minute)
	require.NoError(t, err)
	f.env.PublishN(t, "s.in", "in", 2) // seq 4, 5

	// Read and ack the first one after the consumer was created: seq 4.
	batch, err := cons.Fetch(1, jetstream.FetchMaxWait(wait))
	require.NoError(t, err)
	var got []uint64
	for m := range batch.Messages() {
		md, err := m.Metadata()
		require.NoError(t, err)
		got = append(got, md.Sequence.Stream)
		require.NoError(t, m.DoubleAck(ctx))
	}
	require.Equal(t, []uint64{4}, got)

	f.cfg.Subject = "s.in,s.redrive"
	f.cfg.DeliverPolicy = jetstream.DeliverAllPolicy // must not apply to an existing consumer
	cons, err = delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, time.Minute)
	require.NoError(t, err)
	info := f.info(t)
	assert.Equal(t, []string{"s.in", "s.redrive"}, info.Config.FilterSubjects)
	assert.Empty(t, info.Config.FilterSubject)
	assert.Equal(t, jetstream.DeliverNewPolicy, info.Config.DeliverPolicy)
	assert.Equal(t, uint64(4), info.AckFloor.Stream, "the consumer keeps its position")
	assert.Equal(t, uint64(1), info.NumPending, "seq 5 is still to deliver, nothing before the consumer")

	f.env.PublishN(t, "s.redrive", "redriven", 1) // seq 6
	f.env.PublishN(t, "s.other", "other", 1)      // seq 7: neither subject
	batch, err = cons.Fetch(3, jetstream.FetchMaxWait(time.Second))
	require.NoError(t, err)
	got = nil
	for m := range batch.Messages() {
		md, err := m.Metadata()
		require.NoError(t, err)
		got = append(got, md.Sequence.Stream)
		require.NoError(t, m.DoubleAck(ctx))
	}
	assert.Equal(t, []uint64{5, 6}, got, "both subjects are read from where the consumer was, nothing else")

	f.cfg.Subject = "s.in"
	_, err = delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, time.Minute)
	require.NoError(t, err)
	info = f.info(t)
	assert.Equal(t, "s.in", info.Config.FilterSubject)
	assert.Empty(t, info.Config.FilterSubjects)
	assert.Equal(t, uint64(6), info.AckFloor.Stream)
	assert.Equal(t, uint64(0), info.NumPending)
}

// A consumer that already is what the config asks for is not updated (an update makes the server rewrite and
// fsync its metadata, the cost of every task start); one that differs is. The description, which EnsureConsumer
// never sets, shows whether an update replaced the consumer's config.
func TestEnsureConsumerUpdatesOnlyWhatDiffers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	_, err := delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, time.Minute)
	require.NoError(t, err)
	marked := f.info(t).Config
	marked.Description = "set outside"
	_, err = f.env.JS.UpdateConsumer(ctx, "S", marked)
	require.NoError(t, err)

	_, err = delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, "set outside", f.info(t).Config.Description, "an unchanged config updated the consumer")

	_, err = delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, 2*time.Minute)
	require.NoError(t, err)
	info := f.info(t)
	assert.Equal(t, 2*time.Minute, info.Config.AckWait, "a changed ack wait applies")
	assert.Empty(t, info.Config.Description, "the update replaced the config")

	f.cfg.Tasks = 2
	_, err = delivery.EnsureConsumer(ctx, f.env.JS, f.cfg, 2*time.Minute)
	require.NoError(t, err)
	assert.Equal(t, 2*delivery.MaxInFlight, f.info(t).Config.MaxAckPending, "a changed task count applies")
}
