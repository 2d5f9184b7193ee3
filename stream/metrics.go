package stream

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The metrics history: samples of the cumulative counters of each account's buses, rules and targets, at two
// resolutions, one subject per account and resolution, the last MetricsSamplesPerSubject of each kept.

// MetricsStream is the stream of the metrics history: <cluster>_METRICS.
func (n Names) MetricsStream() string { return n.Cluster + "_METRICS" }

// MetricsSubject is the subject of an account's samples at one resolution: <cluster>.metrics.<account>.<name>.
func (n Names) MetricsSubject(accountID, resolution string) string {
	return n.Cluster + ".metrics." + accountID + "." + resolution
}

// MetricsSamplesPerSubject is how many samples each subject keeps: an hour of 10 s steps and the sample before.
const MetricsSamplesPerSubject = 361

// MetricsStreamConfig is the metrics stream.
func (n Names) MetricsStreamConfig(replicas int) jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	return jetstream.StreamConfig{
		Name:      n.MetricsStream(),
		Subjects:  []string{n.Cluster + ".metrics.*.*"},
		Retention: jetstream.LimitsPolicy,
		Storage:   jetstream.FileStorage,
		// Bounded by samples per subject (two subjects per account), not by MaxBytes, which JetStream would
		// reserve in the store's budget.
		MaxMsgsPerSubject: MetricsSamplesPerSubject,
		MaxAge:            48 * time.Hour, // subjects of accounts gone; the day resolution keeps 30 h
		Discard:           jetstream.DiscardOld,
		Replicas:          replicas,
	}
}

// EnsureMetricsStream creates the metrics stream, or updates it. Idempotent.
func (n Names) EnsureMetricsStream(ctx context.Context, js jetstream.JetStream, replicas int) error {
	if err := ensure(ctx, js, n.MetricsStreamConfig(replicas)); err != nil {
		return fmt.Errorf("ensuring the metrics stream: %w", err)
	}
	return nil
}
