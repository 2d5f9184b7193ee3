package stream

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// TrimDelivered deletes from a stream the messages that every consumer reading them has acknowledged, and nothing
// else: what a bus keeps after delivery (its history) goes, what a target, the router or a source has still to
// read stays. It returns the bytes freed.
//
// A consumer's acknowledgement floor is the stream sequence below which it has acknowledged everything it reads.
// When every consumer filters exact subjects (the router, targets and sources do), each subject is purged below the
// lowest floor of the consumers that read it; a subject no consumer reads is kept (a rule whose target is not
// created yet). When some consumer reads a wildcard or the whole stream, the whole stream is purged below the
// lowest floor of all consumers. A stream without consumers is kept as it is.
func TrimDelivered(ctx context.Context, js jetstream.JetStream, name string) (int64, error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", name, err)
	}
	before := s.CachedInfo().State.Bytes
	floors := map[string]uint64{} // exact subject → lowest floor of the consumers reading it
	lowest, wildcard, any := uint64(math.MaxUint64), false, false
	lister := s.ListConsumers(ctx)
	for ci := range lister.Info() {
		any = true
		floor := ci.AckFloor.Stream
		lowest = min(lowest, floor)
		filters := ci.Config.FilterSubjects
		if ci.Config.FilterSubject != "" {
			filters = append(filters, ci.Config.FilterSubject)
		}
		if len(filters) == 0 {
			wildcard = true
		}
		for _, f := range filters {
			if strings.ContainsAny(f, "*>") {
				wildcard = true
			}
			if old, ok := floors[f]; !ok || floor < old {
				floors[f] = floor
			}
		}
	}
	if err := lister.Err(); err != nil {
		return 0, fmt.Errorf("listing consumers of stream %s: %w", name, err)
	}
	if !any {
		return 0, nil
	}
	if wildcard {
		if lowest > 0 {
			if err := s.Purge(ctx, jetstream.WithPurgeSequence(lowest+1)); err != nil {
				return 0, fmt.Errorf("trimming stream %s: %w", name, err)
			}
		}
	} else {
		for subject, floor := range floors {
			if floor == 0 {
				continue
			}
			if err := s.Purge(ctx, jetstream.WithPurgeSubject(subject), jetstream.WithPurgeSequence(floor+1)); err != nil {
				return 0, fmt.Errorf("trimming %s of stream %s: %w", subject, name, err)
			}
		}
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("reading stream %s: %w", name, err)
	}
	return int64(before) - int64(info.State.Bytes), nil
}
