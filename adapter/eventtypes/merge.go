// Package eventtypes moves the routers' reports of the event types they saw (the event-types stream) into the
// control plane's event types (domain/eventtype), where the schemas are inferred from the samples.
package eventtypes

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain/eventtype"
	"github.com/eventbridge-go/eventbridge/stream"
)

// Merger takes the reports of the event-types stream and adds them to a Recorder, which writes them every few
// seconds. Several control-plane replicas may run one: they share one durable consumer, so each report is taken by
// one of them. A report is acknowledged once added to the recorder: a replica that dies before its recorder's next
// write loses what it took since (a few seconds of counts), as a router that dies loses what it counted since its
// last report.
type Merger struct {
	JS       jetstream.JetStream
	Names    stream.Names
	Replicas int
	Recorder *eventtype.Recorder
	Logger   *slog.Logger
	// Batch is how many reports are fetched at once (100 when zero).
	Batch int
}

// Run merges until ctx ends. It retries what fails (NATS unreachable) after a pause, logged.
func (m *Merger) Run(ctx context.Context) {
	for ctx.Err() == nil {
		err := m.merge(ctx)
		if ctx.Err() != nil {
			return
		}
		m.log().Warn("merging the routers' event types; retrying", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

func (m *Merger) log() *slog.Logger {
	if m.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Logger
}

// merge ensures the stream and merges reports until ctx ends or something fails.
func (m *Merger) merge(ctx context.Context) error {
	if err := m.Names.EnsureEventTypesStream(ctx, m.JS, m.Replicas); err != nil {
		return err
	}
	return stream.DrainWorkQueue(ctx, m.JS, m.Names.EventTypesStream(), m.Names.EventTypesConsumer(), m.Batch,
		func(_ context.Context, msgs []jetstream.Msg) error {
			for _, msg := range msgs {
				rep, err := stream.DecodeEventTypesReport(msg.Data())
				if err != nil {
					m.log().Warn("dropping a malformed report of the event-types stream", "subject", msg.Subject(), "err", err)
					_ = msg.Term()
					continue
				}
				m.add(rep)
				_ = msg.Ack()
			}
			return nil
		})
}

// add gives the recorder what one report says.
func (m *Merger) add(rep stream.EventTypesReport) {
	if rep.Dropped > 0 {
		m.log().Warn("event types: a router saw too many distinct types in one report; some events were not counted",
			"bus", rep.BusID, "events", rep.Dropped)
	}
	for _, t := range rep.Types {
		o := eventtype.Observation{BusID: rep.BusID, Source: t.Source, Type: t.Type, Count: t.Count,
			FirstSeen: t.FirstSeen.UTC(), LastSeen: t.LastSeen.UTC()}
		for _, s := range t.Samples {
			o.Samples = append(o.Samples, s)
		}
		m.Recorder.Add(o)
	}
}
