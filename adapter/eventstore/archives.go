package eventstore

import (
	"context"

	"github.com/eventbridge-go/eventbridge/domain/archive"
)

var _ archive.Store = (*Store)(nil)

// EnsureArchiveStream creates the archive's stream (<cluster>_ARCHIVE_<account>_<archive>), or gives it the
// archive's retention (0: no age limit; its size counts in its account's storage quota). JetStream's refusals for
// want of room are bus.ErrInsufficientStorage.
func (s *Store) EnsureArchiveStream(ctx context.Context, a *archive.Archive) error {
	return storageError(s.names.EnsureArchiveStream(ctx, s.js, a.AccountID(), a.ID(), a.Retention(), s.replicas),
		"the archive "+a.Name())
}

// DeleteArchiveStream deletes the archive's stream and its events; nothing when it does not exist.
func (s *Store) DeleteArchiveStream(ctx context.Context, a *archive.Archive) error {
	return s.names.DeleteArchiveStream(ctx, s.js, a.AccountID(), a.ID())
}

// ArchiveStats reads how many events and bytes the archive's stream holds, and its last sequence.
func (s *Store) ArchiveStats(ctx context.Context, a *archive.Archive) (archive.Stats, error) {
	events, bytes, last, err := s.names.ArchiveInfo(ctx, s.js, a.AccountID(), a.ID())
	if err != nil {
		return archive.Stats{}, err
	}
	return archive.Stats{Events: events, Bytes: bytes, LastSequence: last}, nil
}
