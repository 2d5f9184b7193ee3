package stream

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ReadyStream is the stream the control plane's readiness probe writes to: one message on file storage, so a
// probe that is stored shows that the event store takes writes (not only that NATS answers).
func (n Names) ReadyStream() string { return n.Cluster + "_READY" }

// ReadySubject is the subject of ReadyStream.
func (n Names) ReadySubject() string { return n.Cluster + ".ready" }

// EnsureReadyStream creates the readiness stream, or updates it. Idempotent.
func (n Names) EnsureReadyStream(ctx context.Context, js jetstream.JetStream, replicas int) error {
	err := ensure(ctx, js, jetstream.StreamConfig{
		Name: n.ReadyStream(), Subjects: []string{n.ReadySubject()}, Storage: jetstream.FileStorage,
		Replicas: max(replicas, 1), MaxMsgs: 1, Discard: jetstream.DiscardOld,
		Description: "the control plane's readiness probe: one message, rewritten by every probe",
	})
	if err != nil {
		return fmt.Errorf("ensuring the readiness stream: %w", err)
	}
	return nil
}

// ProbeWrite stores one message on the readiness stream and waits for JetStream's acknowledgement: nil when the
// event store takes writes.
func (n Names) ProbeWrite(ctx context.Context, js jetstream.JetStream) error {
	m := nats.NewMsg(n.ReadySubject())
	m.Data = []byte("ready?")
	if _, err := js.PublishMsg(ctx, m, jetstream.WithExpectStream(n.ReadyStream())); err != nil {
		return fmt.Errorf("the event store does not take writes: %w", err)
	}
	return nil
}
