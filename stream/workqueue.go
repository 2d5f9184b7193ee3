package stream

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// DrainWorkQueue takes the messages of the work-queue stream streamName through its durable consumer durable
// (created or updated here; explicit acknowledgements, 30 s to acknowledge), batch at a time, and hands each
// non-empty batch to handle, which acknowledges what it stored and terminates what it cannot read; what it leaves
// unacknowledged comes back after the ack wait. It returns when ctx ends (ctx's error) or when fetching or handle
// fails (that error). The control-plane replicas share the consumer, so each message goes to one of them.
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
	for ctx.Err() == nil {
		fetched, err := cons.Fetch(batch, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return err
		}
		var msgs []jetstream.Msg
		for m := range fetched.Messages() {
			msgs = append(msgs, m)
		}
		if err := fetched.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) &&
			!errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if len(msgs) == 0 {
			continue
		}
		if err := handle(ctx, msgs); err != nil {
			return err
		}
	}
	return ctx.Err()
}
