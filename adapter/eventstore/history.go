package eventstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain/history"
	"github.com/eventbridge-go/eventbridge/stream"
)

// History keeps the metrics history in the metrics stream: one subject per account and resolution, the last
// stream.MetricsSamplesPerSubject samples of each. A sample's message id is its account, resolution and time, so
// two replicas sampling the same tick (while the sampler's lease changes hands) store it once.
type History struct {
	js       jetstream.JetStream
	names    stream.Names
	replicas int
	ensured  atomic.Bool
}

var _ history.Store = (*History)(nil)

// NewHistory returns the metrics history of the installation named cluster on js.
func NewHistory(js jetstream.JetStream, cluster string, replicas int) *History {
	return &History{js: js, names: stream.Names{Cluster: cluster}, replicas: replicas}
}

// sample is the stored form of a sample: short keys, counters as an array, zero counters left out.
type sample struct {
	At     time.Time     `json:"at"`
	Series []counterWire `json:"s"`
}

type counterWire struct {
	Bus    string `json:"b"`
	Rule   string `json:"r,omitempty"`
	Target string `json:"t,omitempty"`
	In     uint64 `json:"in,omitempty"`
	Match  uint64 `json:"m,omitempty"`
	Deliv  uint64 `json:"d,omitempty"`
	Fail   uint64 `json:"f,omitempty"`
	Dead   uint64 `json:"dl,omitempty"`
	LatUS  uint64 `json:"lat,omitempty"`
}

// Append stores an account's sample at a resolution, creating the stream the first time.
func (h *History) Append(ctx context.Context, accountID string, r history.Resolution, s history.Sample) error {
	if !h.ensured.Load() {
		if err := h.names.EnsureMetricsStream(ctx, h.js, h.replicas); err != nil {
			return err
		}
		h.ensured.Store(true)
	}
	w := sample{At: s.At.UTC(), Series: make([]counterWire, 0, len(s.Series))}
	for _, c := range s.Series {
		w.Series = append(w.Series, counterWire{Bus: c.Bus, Rule: c.Rule, Target: c.Target, In: c.In, Match: c.Matched,
			Deliv: c.Delivered, Fail: c.Failed, Dead: c.DeadLettered, LatUS: c.LatencyMicros})
	}
	data, err := json.Marshal(w)
	if err != nil {
		return err
	}
	subject := h.names.MetricsSubject(accountID, r.Name)
	m := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	m.Header.Set(nats.MsgIdHdr, subject+"@"+w.At.Format(time.RFC3339Nano))
	if _, err := h.js.PublishMsg(ctx, m); err != nil {
		return fmt.Errorf("storing a sample of account %s: %w", accountID, err)
	}
	return nil
}

// Samples returns the account's samples at a resolution, oldest first (at most r.Points+1).
func (h *History) Samples(ctx context.Context, accountID string, r history.Resolution) ([]history.Sample, error) {
	st, err := h.js.Stream(ctx, h.names.MetricsStream())
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the metrics history: %w", err)
	}
	var out []history.Sample
	_, err = scan(ctx, st, scanQuery{subject: h.names.MetricsSubject(accountID, r.Name), limit: stream.MetricsSamplesPerSubject + 1,
		maxScan: stream.MetricsSamplesPerSubject + 1, what: "the metrics history of account " + accountID},
		func(_ uint64, _ time.Time, m jetstream.Msg) int {
			var w sample
			if json.Unmarshal(m.Data(), &w) != nil {
				return 0
			}
			s := history.Sample{At: w.At, Series: make([]history.Counters, 0, len(w.Series))}
			for _, c := range w.Series {
				s.Series = append(s.Series, history.Counters{Bus: c.Bus, Rule: c.Rule, Target: c.Target, In: c.In,
					Matched: c.Match, Delivered: c.Deliv, Failed: c.Fail, DeadLettered: c.Dead, LatencyMicros: c.LatUS})
			}
			out = append(out, s)
			return 1
		})
	if err != nil {
		return nil, err
	}
	if n := r.Points + 1; len(out) > n {
		out = out[len(out)-n:]
	}
	return out, nil
}
