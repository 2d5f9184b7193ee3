package connector

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"
)

// Report collects what a sink says, through ctx, about the records it wrote during one delivery attempt. The
// runtime makes a Report per attempt, puts it in the ctx of Write (WithReport) and keeps its Stats only when the
// attempt was accepted, so a record retried before it is written counts once. A sink reports with ReportMatched.
// Safe for concurrent use; the zero value is empty and ready.
type Report struct {
	matched, unmatched, routed atomic.Uint64

	mu sync.Mutex
	to map[string]uint64 // copies per rule (ReportRoutedTo)
}

// RoutedTo returns the copies reported per rule (ReportRoutedTo); nil when none.
func (r *Report) RoutedTo() map[string]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.to)
}

// AddRoutedTo adds the copies reported per rule (ReportRoutedTo) to to, which the caller guards, and returns it, as
// append does: a map made when to is nil and there is something to add. It is RoutedTo without a copy per record.
func (r *Report) AddRoutedTo(to map[string]uint64) map[string]uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if to == nil && len(r.to) > 0 {
		to = make(map[string]uint64, len(r.to))
	}
	for id, k := range r.to {
		to[id] += k
	}
	return to
}

// RecordStats are the counts of a Report.
type RecordStats struct {
	// Matched counts the records written that matched at least one rule.
	Matched uint64
	// Unmatched counts the records written that matched no rule, so that nothing was routed.
	Unmatched uint64
	// Routed counts the copies stored for the matched records, one per matched rule.
	Routed uint64
}

// Stats returns what was reported so far.
func (r *Report) Stats() RecordStats {
	return RecordStats{Matched: r.matched.Load(), Unmatched: r.unmatched.Load(), Routed: r.routed.Load()}
}

type reportKey struct{}

// WithReport returns ctx carrying r; the runtime calls it before Write.
func WithReport(ctx context.Context, r *Report) context.Context {
	return context.WithValue(ctx, reportKey{}, r)
}

// ReportMatched tells the runtime that the record being written matched rules and that copies copies of it were
// stored, one per matched rule: copies > 0 counts the record as Matched and adds copies to Routed, copies ≤ 0
// counts it as Unmatched. A routing sink calls it once per record, just before Write returns nil. What it reports is
// kept only when the attempt is accepted: Write returned nil for the record and for every other record a transform
// made of the same input. It does nothing when ctx carries no Report (a sink driven outside the
// runtime, as in a test).
func ReportMatched(ctx context.Context, copies int) {
	r, _ := ctx.Value(reportKey{}).(*Report)
	if r == nil {
		return
	}
	if copies <= 0 {
		r.unmatched.Add(1)
		return
	}
	r.matched.Add(1)
	r.routed.Add(uint64(copies))
}

// ReportRoutedTo is ReportMatched naming the rules a copy was stored for, one id per copy: the runtime counts the
// copies of each rule too (a rule's matched events).
func ReportRoutedTo(ctx context.Context, rules []string) {
	r, _ := ctx.Value(reportKey{}).(*Report)
	if r == nil {
		return
	}
	ReportMatched(ctx, len(rules))
	if len(rules) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.to == nil {
		r.to = make(map[string]uint64, len(rules))
	}
	for _, id := range rules {
		r.to[id]++
	}
}
