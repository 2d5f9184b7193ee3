package stream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Archives and replays, as Amazon EventBridge has them. An archive of a bus is a pseudo-rule of its router: every
// event that matches the archive's pattern is copied, with HeaderStoredAt, to the archive's own stream
// (ArchiveStream, one subject ArchiveSubject). A replay is a source connector that reads an archive between two
// stored times and puts the events back on the bus's .in subject with HeaderReplay (and HeaderReplayRules or
// HeaderReplayTarget): the router routes them to the rules those headers allow and never archives them again.
//
// Headers are NATS header names, written and read as they are (NATS headers are case-sensitive).
const (
	// HeaderReplay names the replay that stored a message on a bus's .in subject; the router never archives a
	// message that has it.
	HeaderReplay = "eb-replay"
	// HeaderReplayRules restricts the rules a replayed message is routed to: comma-separated rule ids. Absent: every
	// rule of the bus (never an archive).
	HeaderReplayRules = "eb-replay-rules"
	// HeaderReplayTarget restricts a replayed message to one target of one rule, as <ruleId>.<targetId>: it is
	// routed to that rule only, and its copy goes to RedriveSubject(busID, ruleID, targetID), which only that
	// target's connector reads, instead of the rule's subject.
	HeaderReplayTarget = "eb-replay-target"
	// HeaderStoredAt is when the bus stored the event that an archive holds a copy of (FormatStoredAt); a replay's
	// window is read on it.
	HeaderStoredAt = "eb-stored-at"
)

// storedAtLayout is RFC 3339 with every nanosecond digit, so that the texts of two times sort as the times do.
const storedAtLayout = "2006-01-02T15:04:05.000000000Z07:00"

// FormatStoredAt is the HeaderStoredAt value of t: RFC 3339 in UTC with nanoseconds (nine digits).
func FormatStoredAt(t time.Time) string { return t.UTC().Format(storedAtLayout) }

// ParseStoredAt reads a HeaderStoredAt value (any RFC 3339 time is accepted).
func ParseStoredAt(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("header %s: %q is not an RFC 3339 time", HeaderStoredAt, v)
	}
	return t, nil
}

// ArchivePrefix starts the name of every archive stream: <cluster>_ARCHIVE_. What follows it up to the next '_'
// is the account id (account ids have no '_').
func (n Names) ArchivePrefix() string { return n.Cluster + "_ARCHIVE_" }

// ArchiveStream is the stream of an archive: <cluster>_ARCHIVE_<accountId>_<archiveId>.
func (n Names) ArchiveStream(accountID, archiveID string) string {
	return n.ArchivePrefix() + accountID + "_" + archiveID
}

// ArchiveSubject is the one subject of an archive's stream: <cluster>.archive.<accountId>.<archiveId>.
func (n Names) ArchiveSubject(accountID, archiveID string) string {
	return n.Cluster + ".archive." + accountID + "." + archiveID
}

// ArchiveStreamConfig is the stream of an archive: file storage, its one subject, kept maxAge (0 or less: for
// ever), no size limit (nothing reserved; the control plane meters it against its account's quota), the oldest
// discarded first, and the duplicate window of bus streams (at most maxAge), so that a router's copy retried after a crash is
// stored once. Fewer than one replica is one.
func (n Names) ArchiveStreamConfig(accountID, archiveID string, maxAge time.Duration, replicas int) jetstream.StreamConfig {
	if replicas < 1 {
		replicas = 1
	}
	if maxAge < 0 {
		maxAge = 0
	}
	dup := DuplicateWindow
	if maxAge > 0 && maxAge < dup {
		dup = maxAge // JetStream refuses a window longer than the age limit
	}
	return jetstream.StreamConfig{
		Name:       n.ArchiveStream(accountID, archiveID),
		Subjects:   []string{n.ArchiveSubject(accountID, archiveID)},
		Retention:  jetstream.LimitsPolicy,
		Storage:    jetstream.FileStorage,
		MaxAge:     maxAge,
		MaxBytes:   -1,
		Discard:    jetstream.DiscardOld,
		Duplicates: dup,
		Replicas:   replicas,
	}
}

// EnsureArchiveStream creates the stream of an archive or updates its retention (ArchiveStreamConfig). Idempotent;
// the control plane calls it before a router writes to the archive. Errors are JetStream's, wrapped.
func (n Names) EnsureArchiveStream(ctx context.Context, js jetstream.JetStream, accountID, archiveID string, maxAge time.Duration, replicas int) error {
	if err := ensure(ctx, js, n.ArchiveStreamConfig(accountID, archiveID, maxAge, replicas)); err != nil {
		return fmt.Errorf("ensuring stream of archive %s: %w", archiveID, err)
	}
	return nil
}

// DeleteArchiveStream deletes the stream of an archive, and every event it holds; a missing stream is not an
// error.
func (n Names) DeleteArchiveStream(ctx context.Context, js jetstream.JetStream, accountID, archiveID string) error {
	err := js.DeleteStream(ctx, n.ArchiveStream(accountID, archiveID))
	if err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("deleting stream of archive %s: %w", archiveID, err)
	}
	return nil
}

// ArchiveInfo reads what an archive's stream holds now: the number of events, their size in bytes, and the
// sequence of the last one stored (0 when none ever was; a replay is done once it read past it). A missing stream
// is an error that wraps jetstream.ErrStreamNotFound.
func (n Names) ArchiveInfo(ctx context.Context, js jetstream.JetStream, accountID, archiveID string) (events, bytes, lastSeq uint64, err error) {
	s, err := js.Stream(ctx, n.ArchiveStream(accountID, archiveID))
	if err != nil {
		return 0, 0, 0, fmt.Errorf("reading stream of archive %s: %w", archiveID, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("reading stream of archive %s: %w", archiveID, err)
	}
	return info.State.Msgs, info.State.Bytes, info.State.LastSeq, nil
}
