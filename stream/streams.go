package stream

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DuplicateWindow is how long a message id is remembered, so a retried put is stored once.
const DuplicateWindow = 2 * time.Minute

// BusStreamConfig is the stream of a bus with its retention. A maxBytes of 0 or less gives the stream no size
// limit (nothing reserved; the control plane meters it against its account's quota and trims what was delivered,
// TrimDelivered). A size of its own is reserved, and the stream refuses new messages when full rather than
// discarding old ones, which may not be delivered yet: the control plane trims what was delivered before that.
func (n Names) BusStreamConfig(busID string, maxAge time.Duration, maxBytes int64, replicas int) jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	if maxBytes <= 0 {
		maxBytes = -1
	}
	return jetstream.StreamConfig{
		Name:       n.BusStream(busID),
		Subjects:   n.BusSubjects(busID),
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		MaxAge:     maxAge,
		MaxBytes:   maxBytes,
		Discard:    jetstream.DiscardNew,
		Duplicates: DuplicateWindow,
		Replicas:   replicas,
	}
}

// ensure creates the stream of cfg or, when a stream of that name exists with another config, updates it to cfg.
// Creating a stream that exists with the same config changes nothing on the server, where an update (what
// CreateOrUpdateStream tries first) rewrites the stream's metadata files and checks its subjects against every
// stream of the account: an ensure that finds the stream as it should be costs a lookup, whatever the number of
// streams (every bus creation ensures its account's dead-letter stream).
func ensure(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	_, err := js.CreateStream(ctx, cfg)
	if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		_, err = js.UpdateStream(ctx, cfg)
	}
	return err
}

// EnsureBusStream creates the stream of a bus or updates its limits. Idempotent.
func (n Names) EnsureBusStream(ctx context.Context, js jetstream.JetStream, busID string, maxAge time.Duration, maxBytes int64, replicas int) error {
	if err := ensure(ctx, js, n.BusStreamConfig(busID, maxAge, maxBytes, replicas)); err != nil {
		return fmt.Errorf("ensuring stream of bus %s: %w", busID, err)
	}
	return nil
}

// DeleteBusStream deletes the stream of a bus; a missing stream is not an error.
func (n Names) DeleteBusStream(ctx context.Context, js jetstream.JetStream, busID string) error {
	err := js.DeleteStream(ctx, n.BusStream(busID))
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting stream of bus %s: %w", busID, err)
	}
	return nil
}

// DeleteDLQStream deletes the dead-letter stream of an account; a missing stream is not an error.
func (n Names) DeleteDLQStream(ctx context.Context, js jetstream.JetStream, accountID string) error {
	err := js.DeleteStream(ctx, n.DLQStream(accountID))
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting the dead-letter stream of account %s: %w", accountID, err)
	}
	return nil
}

// PurgeRule removes the events routed to a rule, and the dead letters redriven to its targets, from its bus's
// stream; a missing stream is not an error.
func (n Names) PurgeRule(ctx context.Context, js jetstream.JetStream, busID, ruleID string) error {
	return n.purge(ctx, js, busID, "rule "+ruleID, n.RuleSubject(busID, ruleID), n.RedriveSubject(busID, ruleID, "*"))
}

// PurgeSource removes what a source received and its connector did not move to the bus yet; a missing stream is
// not an error.
func (n Names) PurgeSource(ctx context.Context, js jetstream.JetStream, busID, sourceID string) error {
	return n.purge(ctx, js, busID, "source "+sourceID, n.SourceSubject(busID, sourceID))
}

func (n Names) purge(ctx context.Context, js jetstream.JetStream, busID, what string, subjects ...string) error {
	s, err := js.Stream(ctx, n.BusStream(busID))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, subj := range subjects {
		if err := s.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
			return fmt.Errorf("purging events of %s: %w", what, err)
		}
	}
	return nil
}

// EnsureBusSubjects adds the subject families of BusSubjects that a bus's stream lacks (a stream created by an
// earlier version), keeping the rest of its config. Writers to a family newer than the stream call it first.
func (n Names) EnsureBusSubjects(ctx context.Context, js jetstream.JetStream, busID string) error {
	s, err := js.Stream(ctx, n.BusStream(busID))
	if err != nil {
		return fmt.Errorf("reading stream of bus %s: %w", busID, err)
	}
	cfg := s.CachedInfo().Config
	if slices.Equal(cfg.Subjects, n.BusSubjects(busID)) {
		return nil
	}
	cfg.Subjects = n.BusSubjects(busID)
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("updating subjects of bus %s: %w", busID, err)
	}
	return nil
}

// LastSequence returns the sequence of the last message stored in a bus's stream (0 when empty).
func (n Names) LastSequence(ctx context.Context, js jetstream.JetStream, busID string) (uint64, error) {
	s, err := js.Stream(ctx, n.BusStream(busID))
	if err != nil {
		return 0, fmt.Errorf("reading stream of bus %s: %w", busID, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// DLQRetention is how long dead letters are kept by default.
const DLQRetention = 14 * 24 * time.Hour

// DLQMaxBytes is the default bound of an account's dead letters.
const DLQMaxBytes = 256 << 20

// DLQLimits bound an account's dead-letter stream: dead letters older than MaxAge are deleted, and when the stream
// holds MaxBytes the oldest are deleted to make room for the new (JetStream's DiscardOld): a failing target never
// stops on its dead letters, and never fills the disk. Zero fields take DLQRetention and DLQMaxBytes.
type DLQLimits struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// DLQStreamConfig is the dead-letter stream of an account.
func (n Names) DLQStreamConfig(accountID string, replicas int, limits DLQLimits) jetstream.StreamConfig {
	return boundedStream(n.DLQStream(accountID), n.DLQSubject(accountID), replicas, limits.MaxAge, limits.MaxBytes,
		DLQRetention, DLQMaxBytes)
}

// boundedStream is a file stream of an account's records bounded by age and size, whose oldest records go when it
// is full (DiscardOld); zero bounds take the defaults, fewer than one replica is one.
func boundedStream(name, subject string, replicas int, maxAge time.Duration, maxBytes int64,
	defaultAge time.Duration, defaultBytes int64) jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	if maxAge <= 0 {
		maxAge = defaultAge
	}
	if maxBytes <= 0 {
		maxBytes = defaultBytes
	}
	return jetstream.StreamConfig{
		Name:       name,
		Subjects:   []string{subject},
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		MaxAge:     maxAge,
		MaxBytes:   maxBytes,
		Discard:    jetstream.DiscardOld,
		Duplicates: DuplicateWindow,
		Replicas:   replicas,
	}
}

// EnsureDLQStream creates the dead-letter stream of an account, or updates it (its limits included). Idempotent.
func (n Names) EnsureDLQStream(ctx context.Context, js jetstream.JetStream, accountID string, replicas int, limits DLQLimits) error {
	if err := ensure(ctx, js, n.DLQStreamConfig(accountID, replicas, limits)); err != nil {
		return fmt.Errorf("ensuring dead-letter stream of account %s: %w", accountID, err)
	}
	return nil
}
