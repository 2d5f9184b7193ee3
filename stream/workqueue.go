package stream

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// drainPullExpiry is how long a pull request of DrainWorkQueue waits at the server for messages. An idle queue
// costs one request this often, and the server's heartbeat in between, where a fetch of a second cost a request,
// its timeout and a subscription each second.
const drainPullExpiry = 30 * time.Second

// drainGather is how long a batch of DrainWorkQueue gathers messages after its first: the messages of a burst are
// handled together, and a message waits at most this long after it arrived.
const drainGather = 250 * time.Millisecond

// DrainWorkQueue takes the messages of the work-queue stream streamName through its durable consumer durable
// (created or updated here; explicit acknowledgements, 30 s to acknowledge), at most batch at a time, and hands
// each batch to handle, which acknowledges what it stored and terminates what it cannot read; what it leaves
// unacknowledged comes back after the ack wait. Messages arrive as they are stored (one pull request stays open);
// a batch holds what arrived within drainGather of its first. It returns when ctx ends (ctx's error) or when
// reading or handle fails (that error). The control-plane replicas share the consumer, so each message goes to one
// of them.
func DrainWorkQueue(ctx context.Context, js jetstream.JetStream, streamName, durable string, batch int,
	handle func(ctx context.Context, msgs []jetstream.Msg) error) error {
	cons, err := js.CreateOrUpdateConsumer(ctx, streamName, jetstream.ConsumerConfig{
		Durable: durable, AckPolicy: jetstream.AckExplicitPolicy, AckWait: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	if batch <= 0 {
		batch = 100
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(batch), jetstream.PullExpiry(drainPullExpiry))
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		first, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		msgs := []jetstream.Msg{first}
		gather, cancel := context.WithTimeout(ctx, drainGather)
		for len(msgs) < batch {
			m, err := it.Next(jetstream.NextContext(gather))
			if err != nil {
				break // the window closed, or the iterator failed: the next Next tells which
			}
			msgs = append(msgs, m)
		}
		cancel()
		if err := handle(ctx, msgs); err != nil {
			return err
		}
	}
}
