package deadletter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
)

// Service holds the dead-letter use cases of an account: list, redrive, discard.
type Service struct {
	Store   Store
	Buses   bus.Repository
	Rules   rule.Repository
	Targets target.Repository
	// Logger receives the internal errors that per-entry results do not return; nil discards them.
	Logger *slog.Logger
	// Log, when set, records each redrive in the log of the target's bus when that bus logs at INFO or TRACE.
	Log RedriveLog
}

// RedriveLog records redrives in bus logs.
type RedriveLog interface {
	// Redriven records that dl was redriven to its target on bus b.
	Redriven(ctx context.Context, b *bus.Bus, dl *DeadLetter) error
}

// MaxIDs is the number of ids one redrive or discard names at most.
const MaxIDs = 500

// batchSize is the number of dead letters a redrive or discard by filter reads at once.
const batchSize = 500

// Selection is what a redrive or discard acts on: the dead letters named by IDs, or every one that Filter selects.
type Selection struct {
	IDs    []string
	Filter *Filter
	seqs   []uint64
}

// NewSelection validates a selection: exactly one of ids (1 to MaxIDs distinct ids) and filter. Errors name the
// input (ids, ids[i], filter).
func NewSelection(ids []string, filter *Filter) (Selection, error) {
	switch {
	case ids == nil && filter == nil:
		return Selection{}, domain.Invalid("ids", "name the dead letters with ids, or select them with filter ({} selects every one)")
	case ids != nil && filter != nil:
		return Selection{}, domain.Invalid("filter", "give either ids or filter, not both")
	case filter != nil:
		return Selection{Filter: filter}, nil
	case len(ids) == 0:
		return Selection{}, domain.Invalid("ids", "ids is empty; name at least one dead letter")
	case len(ids) > MaxIDs:
		return Selection{}, domain.Invalid("ids", "ids names %d dead letters; at most %d are allowed in one call", len(ids), MaxIDs)
	}
	seen := make(map[uint64]bool, len(ids))
	seqs := make([]uint64, 0, len(ids))
	for i, id := range ids {
		field := "ids[" + strconv.Itoa(i) + "]"
		seq, err := ParseID(field, id)
		if err != nil {
			return Selection{}, err
		}
		if seen[seq] {
			return Selection{}, domain.Invalid(field, "dead letter %s is named twice in ids", id)
		}
		seen[seq] = true
		seqs = append(seqs, seq)
	}
	return Selection{IDs: ids, seqs: seqs}, nil
}

// EntryResult is the result of a redrive or discard of one dead letter: Err is nil when it succeeded, else a
// domain error whose code and message say why (the dead letter then stays).
type EntryResult struct {
	ID  string
	Err *domain.Error
}

// Result lists the result of each dead letter of a redrive or discard, in the order of the ids, or in stream
// order for a filter.
type Result struct {
	Entries []EntryResult
}

// Failed counts the entries that failed.
func (r Result) Failed() int {
	n := 0
	for _, e := range r.Entries {
		if e.Err != nil {
			n++
		}
	}
	return n
}

// Succeeded counts the entries that succeeded.
func (r Result) Succeeded() int { return len(r.Entries) - r.Failed() }

func (s *Service) log() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// List returns one page of the account's dead letters that f selects, oldest first, and the next page's token
// ("" at the end). A page reads at most ScanLimit dead letters, so a selective filter may answer fewer than the
// page's limit, even none, with a next token. Errors: domain.ErrValidation (nextToken); the store's errors.
func (s *Service) List(ctx context.Context, accountID string, f Filter, page domain.Page) ([]*DeadLetter, string, error) {
	after, err := page.AfterSequence()
	if err != nil {
		return nil, "", err
	}
	dls, next, err := s.Store.List(ctx, accountID, Query{Filter: f, After: after, Limit: page.Size(), MaxScan: ScanLimit})
	if err != nil {
		return nil, "", fmt.Errorf("listing the dead letters of account %s: %w", accountID, err)
	}
	token := domain.SequenceToken(next)
	return dls, token, nil
}

// Redrive sends the selected dead letters back to the target that gave each up, through the target's redrive
// subject (read by that target's connector only, not by the other targets of its rule), and removes each once
// stored there. Selected by ids, every id must exist (else ErrNotFound naming it, and nothing is redriven); selected
// by filter, the dead letters stored when the call starts are read (a redriven event that fails again comes back
// later and is not redriven twice by one call). A dead letter whose target no longer exists, or that names no
// target, fails alone. Errors: ErrNotFound; the store's errors.
func (s *Service) Redrive(ctx context.Context, accountID string, sel Selection) (Result, error) {
	r := &resolver{s: s, accountID: accountID, done: map[string]resolved{}}
	return s.each(ctx, accountID, sel, func(dl *DeadLetter) *domain.Error {
		dest, derr := r.destination(ctx, dl)
		if derr != nil {
			return derr
		}
		err := s.Store.Redrive(ctx, accountID, dl.Sequence(), dest)
		switch {
		case err == nil:
			s.logRedrive(ctx, r.bus(dl), dl)
			return nil
		case errors.Is(err, ErrNotFound):
			return ErrNotFound.With("dead letter %s no longer exists (redriven or discarded meanwhile)", dl.ID())
		}
		s.log().Error("redriving a dead letter", "account", accountID, "id", dl.ID(), "err", err)
		return ErrRedriveFailed.With("dead letter %s could not be redriven now; it stays in the list (the error has been logged)", dl.ID())
	})
}

// logRedrive records a redrive in the log of the target's bus when it logs at INFO or TRACE; a failure is logged,
// not returned: the redrive happened.
func (s *Service) logRedrive(ctx context.Context, b *bus.Bus, dl *DeadLetter) {
	if s.Log == nil || b == nil || (b.Log().Level != bus.LogInfo && b.Log().Level != bus.LogTrace) {
		return
	}
	if err := s.Log.Redriven(ctx, b, dl); err != nil {
		s.log().Warn("recording a redrive in the bus log", "bus", b.Name(), "id", dl.ID(), "err", err)
	}
}

// Delete discards the selected dead letters, with the selection rules of Redrive. Errors: ErrNotFound; the store's
// errors.
func (s *Service) Delete(ctx context.Context, accountID string, sel Selection) (Result, error) {
	return s.each(ctx, accountID, sel, func(dl *DeadLetter) *domain.Error {
		err := s.Store.Delete(ctx, accountID, dl.Sequence())
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrNotFound):
			return ErrNotFound.With("dead letter %s no longer exists (redriven or discarded meanwhile)", dl.ID())
		}
		s.log().Error("discarding a dead letter", "account", accountID, "id", dl.ID(), "err", err)
		return ErrDeleteFailed.With("dead letter %s could not be discarded now; it stays in the list (the error has been logged)", dl.ID())
	})
}

// each runs fn on every selected dead letter and collects the results.
func (s *Service) each(ctx context.Context, accountID string, sel Selection, fn func(*DeadLetter) *domain.Error) (Result, error) {
	var res Result
	if sel.Filter == nil {
		if len(sel.seqs) == 0 {
			return res, domain.Invalid("ids", "name the dead letters with ids, or select them with filter")
		}
		dls := make([]*DeadLetter, 0, len(sel.seqs))
		for i, seq := range sel.seqs {
			dl, err := s.Store.Get(ctx, accountID, seq)
			if errors.Is(err, ErrNotFound) {
				return res, ErrNotFound.With("dead letter %s does not exist", sel.IDs[i]).WithField("ids[" + strconv.Itoa(i) + "]")
			}
			if err != nil {
				return res, fmt.Errorf("reading dead letter %s of account %s: %w", sel.IDs[i], accountID, err)
			}
			dls = append(dls, dl)
		}
		for _, dl := range dls {
			if err := ctx.Err(); err != nil {
				return res, err // the caller went away: stop rather than fail every remaining entry
			}
			res.Entries = append(res.Entries, EntryResult{ID: dl.ID(), Err: fn(dl)})
		}
		return res, nil
	}

	last, err := s.Store.Last(ctx, accountID)
	if err != nil {
		return res, fmt.Errorf("reading the dead letters of account %s: %w", accountID, err)
	}
	after := uint64(0)
	for last > 0 {
		dls, next, err := s.Store.List(ctx, accountID, Query{Filter: *sel.Filter, After: after, Limit: batchSize, Until: last})
		if err != nil {
			return res, fmt.Errorf("listing the dead letters of account %s: %w", accountID, err)
		}
		for _, dl := range dls {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			res.Entries = append(res.Entries, EntryResult{ID: dl.ID(), Err: fn(dl)})
		}
		if next == 0 {
			break
		}
		after = next
	}
	return res, nil
}

// resolver finds the ids of the targets dead letters name, once per target in one call.
type resolver struct {
	s         *Service
	accountID string
	done      map[string]resolved
}

type resolved struct {
	dest Destination
	b    *bus.Bus
	err  *domain.Error
}

// bus returns the bus of the target dl names, once resolved (nil before or when it is gone).
func (r *resolver) bus(dl *DeadLetter) *bus.Bus {
	return r.done[dl.Bus()+"."+dl.Rule()+"."+dl.Target()].b
}

// destination returns where dl goes back to, or why it cannot.
func (r *resolver) destination(ctx context.Context, dl *DeadLetter) (Destination, *domain.Error) {
	if dl.Bus() == "" {
		return Destination{}, ErrNotRedrivable.With("dead letter %s was given up by %q, which is not a target's connector: "+
			"there is no target to redrive it to", dl.ID(), dl.Connector())
	}
	key := dl.Bus() + "." + dl.Rule() + "." + dl.Target()
	if v, ok := r.done[key]; ok {
		return v.dest, v.err
	}
	dest, b, err := r.lookup(ctx, dl)
	var derr *domain.Error
	if err != nil {
		if !errors.Is(err, bus.ErrNotFound) && !errors.Is(err, rule.ErrNotFound) && !errors.Is(err, target.ErrNotFound) {
			r.s.log().Error("resolving the target of a dead letter", "account", r.accountID, "id", dl.ID(), "err", err)
			return Destination{}, ErrRedriveFailed.With("dead letter %s could not be redriven now; it stays in the list (the error has been logged)", dl.ID())
		}
		derr = target.ErrNotFound.With("target %q of rule %q on bus %q no longer exists (%s); dead letter %s stays in the list",
			dl.Target(), dl.Rule(), dl.Bus(), notFoundWhat(err, dl), dl.ID())
	}
	r.done[key] = resolved{dest: dest, b: b, err: derr}
	return dest, derr
}

func (r *resolver) lookup(ctx context.Context, dl *DeadLetter) (Destination, *bus.Bus, error) {
	b, err := r.s.Buses.Get(ctx, r.accountID, dl.Bus())
	if err != nil {
		return Destination{}, nil, err
	}
	ru, err := r.s.Rules.Get(ctx, b.ID(), dl.Rule())
	if err != nil {
		return Destination{}, nil, err
	}
	t, err := r.s.Targets.Get(ctx, ru.ID(), dl.Target())
	if err != nil {
		return Destination{}, nil, err
	}
	return Destination{BusID: b.ID(), RuleID: ru.ID(), TargetID: t.ID()}, b, nil
}

// notFoundWhat says which of the bus, rule and target is gone.
func notFoundWhat(err error, dl *DeadLetter) string {
	switch {
	case errors.Is(err, bus.ErrNotFound):
		return fmt.Sprintf("bus %q was deleted", dl.Bus())
	case errors.Is(err, rule.ErrNotFound):
		return fmt.Sprintf("rule %q was deleted", dl.Rule())
	}
	return fmt.Sprintf("target %q was deleted", dl.Target())
}
