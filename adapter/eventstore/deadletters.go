package eventstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/domain/deadletter"
	"github.com/eventbridge-go/eventbridge/stream"
)

// DeadLetters implements the domain's dead-letter store on the accounts' dead-letter streams
// (<cluster>_DLQ_<account>): it lists them by scanning a stream with a short-lived consumer, redrives one by
// storing its original event on its target's redrive subject, and discards one by deleting it.
type DeadLetters struct {
	js    jetstream.JetStream
	names stream.Names
	// Timeout bounds one publish, delete or read.
	Timeout time.Duration
	// subjectsEnsured holds the ids of buses whose stream has every subject family (EnsureBusSubjects ran).
	subjectsEnsured sync.Map
}

var _ deadletter.Store = (*DeadLetters)(nil)

// NewDeadLetters returns the dead-letter store of the installation named cluster on the JetStream context js.
func NewDeadLetters(js jetstream.JetStream, cluster string) *DeadLetters {
	return &DeadLetters{js: js, names: stream.Names{Cluster: cluster}, Timeout: 10 * time.Second}
}

// fetchBatch is the number of dead letters one fetch of a scan asks for.
const fetchBatch = 256

// stream returns the account's dead-letter stream, nil when it does not exist.
func (d *DeadLetters) stream(ctx context.Context, accountID string) (jetstream.Stream, error) {
	s, err := d.js.Stream(ctx, d.names.DLQStream(accountID))
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the dead-letter stream of account %s: %w", accountID, err)
	}
	return s, nil
}

// Last returns the sequence of the account's last dead letter (0 when there is none).
func (d *DeadLetters) Last(ctx context.Context, accountID string) (uint64, error) {
	s, err := d.stream(ctx, accountID)
	if s == nil || err != nil {
		return 0, err
	}
	st := s.CachedInfo().State
	if st.Msgs == 0 {
		return 0, nil
	}
	return st.LastSeq, nil
}

// List scans the account's dead-letter stream in order from q.After+1 (or from q.Filter.From's time on a first
// page) with an ephemeral consumer that acknowledges nothing, and keeps the dead letters q.Filter selects. It
// stops at q.Limit matches, after q.MaxScan dead letters read, at q.Until, at the first dead letter stored after
// q.Filter.To, or at the end of the stream; it returns the sequence of the last dead letter read when more may
// follow, else 0.
func (d *DeadLetters) List(ctx context.Context, accountID string, q deadletter.Query) ([]*deadletter.DeadLetter, uint64, error) {
	s, err := d.stream(ctx, accountID)
	if s == nil || err != nil {
		return nil, 0, err
	}
	maxScan := q.MaxScan
	if maxScan <= 0 {
		maxScan = deadletter.ScanLimit
	}
	var out []*deadletter.DeadLetter
	next, err := scan(ctx, s, scanQuery{subject: d.names.DLQSubject(accountID), after: q.After, from: q.Filter.From, to: q.Filter.To,
		until: q.Until, limit: q.Limit, maxScan: maxScan, what: "the dead-letter stream of account " + accountID},
		func(seq uint64, at time.Time, m jetstream.Msg) int {
			// The connector header rules most dead letters out before the event is decoded.
			if !q.Filter.SelectsConnector(accountID, m.Headers().Get(stream.HeaderDLQConnector)) {
				return 0
			}
			dl, err := d.decode(accountID, seq, at, m.Headers(), m.Data())
			if err != nil || !q.Filter.Matches(dl) {
				return 0
			}
			out = append(out, dl)
			return 1
		})
	if err != nil {
		return nil, 0, err
	}
	return out, next, nil
}

// decode reads a stored dead letter.
func (d *DeadLetters) decode(accountID string, seq uint64, at time.Time, h nats.Header, data []byte) (*deadletter.DeadLetter, error) {
	ev, info, err := decodeDeadLetter(h, data)
	if err != nil {
		return nil, err
	}
	return deadletter.Rebuild(accountID, deadletter.Record{
		Sequence: seq, Time: at, Connector: info.Connector, Reason: info.Reason, ErrorClass: info.ErrorClass,
		Attempts: info.Attempts, Event: ev,
	}), nil
}

// decodeDeadLetter reads a stored dead letter: the original event, without the ebdlq* extensions that
// EncodeDeadLetter added (removed here through SetExtension: the map Extensions returns is a copy, so
// stream.DecodeDeadLetter leaves them), and why it was given up.
func decodeDeadLetter(h nats.Header, data []byte) (*event.Event, stream.DeadLetter, error) {
	ev, info, err := stream.DecodeDeadLetter(&nats.Msg{Header: h, Data: data})
	if err != nil {
		return nil, info, err
	}
	for _, ext := range []string{stream.ExtDLQReason, stream.ExtDLQAttempts, stream.ExtDLQConnector, stream.ExtDLQErrorClass} {
		ev.SetExtension(ext, nil) // nil removes it
	}
	return ev, info, nil
}

// raw reads one stored dead letter; deadletter.ErrNotFound when the account has none at seq.
func (d *DeadLetters) raw(ctx context.Context, accountID string, seq uint64) (jetstream.Stream, *jetstream.RawStreamMsg, error) {
	s, err := d.stream(ctx, accountID)
	if err != nil {
		return nil, nil, err
	}
	if s == nil {
		return nil, nil, deadletter.ErrNotFound.With("dead letter %d does not exist", seq)
	}
	m, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) || (err == nil && m.Subject != d.names.DLQSubject(accountID)) {
		return nil, nil, deadletter.ErrNotFound.With("dead letter %d does not exist", seq)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading dead letter %d of account %s: %w", seq, accountID, err)
	}
	return s, m, nil
}

// Get returns one dead letter; deadletter.ErrNotFound when the account has none at seq.
func (d *DeadLetters) Get(ctx context.Context, accountID string, seq uint64) (*deadletter.DeadLetter, error) {
	_, m, err := d.raw(ctx, accountID, seq)
	if err != nil {
		return nil, err
	}
	dl, err := d.decode(accountID, seq, m.Time, m.Header, m.Data)
	if err != nil {
		return nil, fmt.Errorf("dead letter %d of account %s: %w", seq, accountID, err)
	}
	return dl, nil
}

// Redrive stores the original event of the dead letter at seq (without its eb-dlq-* headers and extensions) on
// the destination's redrive subject, with the Nats-Msg-Id HopMsgID(<the dead letter's Nats-Msg-Id, else
// stream:sequence>, "redrive", <seq>) so that a redrive retried within the duplicate window is stored once, waits
// for JetStream's acknowledgement, then deletes the dead letter. A crash between the two leaves the dead letter,
// redriven, in the list: at worst it is redriven twice, never lost. The first redrive to a bus adds the subject
// families that a stream made by an earlier version lacks. Errors: deadletter.ErrNotFound; JetStream's.
func (d *DeadLetters) Redrive(ctx context.Context, accountID string, seq uint64, to deadletter.Destination) error {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	s, m, err := d.raw(ctx, accountID, seq)
	if err != nil {
		return err
	}
	ev, _, err := decodeDeadLetter(m.Header, m.Data)
	if err != nil {
		return fmt.Errorf("dead letter %d of account %s: %w", seq, accountID, err)
	}
	if _, ok := d.subjectsEnsured.Load(to.BusID); !ok {
		if err := d.names.EnsureBusSubjects(ctx, d.js, to.BusID); err != nil {
			return err
		}
		d.subjectsEnsured.Store(to.BusID, true)
	}
	prev := m.Header.Get(nats.MsgIdHdr)
	if prev == "" {
		prev = d.names.DLQStream(accountID) + ":" + strconv.FormatUint(seq, 10)
	}
	out := stream.Encode(ev)
	out.Subject = d.names.RedriveSubject(to.BusID, to.RuleID, to.TargetID)
	out.Header.Set(nats.MsgIdHdr, stream.HopMsgID(prev, "redrive", strconv.FormatUint(seq, 10)))
	if _, err := d.js.PublishMsg(ctx, out, jetstream.WithExpectStream(d.names.BusStream(to.BusID))); err != nil {
		return fmt.Errorf("storing dead letter %d on %s: %w", seq, out.Subject, err)
	}
	if err := s.DeleteMsg(ctx, seq); err != nil && !isMsgNotFound(err) {
		// Redriven but still listed: a later redrive stores it again (once within the duplicate window).
		return fmt.Errorf("removing dead letter %d of account %s after its redrive: %w", seq, accountID, err)
	}
	return nil
}

// Delete removes the dead letter at seq; deadletter.ErrNotFound when the account has none there.
func (d *DeadLetters) Delete(ctx context.Context, accountID string, seq uint64) error {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	s, _, err := d.raw(ctx, accountID, seq)
	if err != nil {
		return err
	}
	if err := s.DeleteMsg(ctx, seq); err != nil {
		if isMsgNotFound(err) {
			return deadletter.ErrNotFound.With("dead letter %d does not exist", seq)
		}
		return fmt.Errorf("deleting dead letter %d of account %s: %w", seq, accountID, err)
	}
	return nil
}

// isMsgNotFound reports whether err says the message is not (or no longer) in the stream.
func isMsgNotFound(err error) bool {
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeMessageNotFound
}
