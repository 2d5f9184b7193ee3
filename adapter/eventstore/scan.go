package eventstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// scanQuery is one page of a scan of one subject of a stream.
type scanQuery struct {
	subject string
	// after is the sequence the scan starts after; 0 starts at from (when set), else at the first message.
	after uint64
	// from and to bound the time the messages were stored (zero: unbounded); the scan stops at the first message
	// stored after to.
	from, to time.Time
	// until, when not 0, is the last sequence read.
	until uint64
	// limit is how many items (events, records) are kept at most; maxScan how many messages are read at most.
	limit, maxScan int
	// what names the stream in errors ("the dead-letter stream of account a").
	what string
}

// scan reads the messages of st on q.subject in order through an ephemeral consumer that acknowledges nothing (in
// memory, deleted when the scan ends) and calls keep with each; keep says how many items of it it kept (a record
// batch holds several). It stops once q.limit are kept, after q.maxScan read, at the first message stored after
// q.to, at q.until or at the end of the stream as it was when the scan started, and returns the sequence of the
// last message read when more may follow, else 0.
func scan(ctx context.Context, st jetstream.Stream, q scanQuery, keep func(seq uint64, at time.Time, m jetstream.Msg) int) (uint64, error) {
	state := st.CachedInfo().State
	end := state.LastSeq
	if q.until != 0 && q.until < end {
		end = q.until
	}
	if state.Msgs == 0 || q.after >= end || q.limit <= 0 || q.maxScan <= 0 {
		return 0, nil
	}
	cc := jetstream.ConsumerConfig{
		DeliverPolicy:     jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:       max(q.after+1, state.FirstSeq),
		AckPolicy:         jetstream.AckNonePolicy,
		FilterSubject:     q.subject,
		InactiveThreshold: time.Minute,
		MemoryStorage:     true,
		Replicas:          1,
	}
	if q.after == 0 && !q.from.IsZero() {
		from := q.from
		cc.DeliverPolicy, cc.OptStartSeq, cc.OptStartTime = jetstream.DeliverByStartTimePolicy, 0, &from
	}
	cons, err := st.CreateConsumer(ctx, cc)
	if err != nil {
		return 0, fmt.Errorf("scanning %s: %w", q.what, err)
	}
	defer func() {
		// The server removes it after InactiveThreshold anyway.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = st.DeleteConsumer(dctx, cons.CachedInfo().Name)
	}()
	kept, scanned := 0, 0
	for {
		batch, err := cons.FetchNoWait(min(fetchBatch, q.maxScan-scanned))
		if err != nil {
			return 0, fmt.Errorf("scanning %s: %w", q.what, err)
		}
		got := 0
		for m := range batch.Messages() {
			got++
			md, err := m.Metadata()
			if err != nil {
				continue
			}
			seq := md.Sequence.Stream
			if seq > end || (!q.to.IsZero() && md.Timestamp.After(q.to)) {
				return 0, nil
			}
			scanned++
			kept += keep(seq, md.Timestamp, m)
			switch {
			case seq >= end || md.NumPending == 0:
				return 0, nil
			case kept >= q.limit || scanned >= q.maxScan:
				return seq, nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) {
			return 0, fmt.Errorf("scanning %s: %w", q.what, err)
		}
		if got == 0 {
			return 0, nil // what was pending was deleted meanwhile
		}
	}
}
