package pattern

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
)

// Matcher holds many patterns under ids and answers, in one pass over an event, which of them match. It is safe
// for concurrent use: a Match that runs while patterns are added or deleted answers for the patterns before or
// after the change. Add and Delete make the next Match rebuild the matcher's index (other Matches wait for it),
// so a bus's rule table is best loaded with its Adds before its first Match.
//
// How it matches: every pattern expands into clauses (the combinations of its $or branches). Each clause is
// driven by its most selective condition, chosen when the index is built from how many clauses share each value
// (an exact value shared by no other clause beats a numeric range, which beats exists or anything-but). The
// driving conditions are indexed per path (see pathIndex); the event is scanned once, skipping what no pattern
// names, each of its leaves is looked up in the index of its path, and the clauses found are verified against
// the event (their other conditions, exists:false, and array consistency). The cost of an event therefore grows
// with its size and with the number of clauses its values select, not with the number of patterns. Clauses
// without any positive condition (only exists:false) are verified for every event.
type Matcher struct {
	mu       sync.Mutex
	patterns map[string]*Pattern
	snap     atomic.Pointer[snapshot] // nil when the patterns changed since it was built
}

// NewMatcher returns an empty matcher.
func NewMatcher() *Matcher {
	return &Matcher{patterns: map[string]*Pattern{}}
}

// Add adds the pattern under id, replacing any pattern of that id. The error is for a nil pattern.
func (m *Matcher) Add(id string, p *Pattern) error {
	if p == nil {
		return errors.New("pattern: Add of a nil pattern")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.patterns == nil {
		m.patterns = map[string]*Pattern{}
	}
	m.patterns[id] = p
	m.snap.Store(nil)
	return nil
}

// Delete removes the pattern under id, if any.
func (m *Matcher) Delete(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.patterns[id]; ok {
		delete(m.patterns, id)
		m.snap.Store(nil)
	}
}

// Match scans the event once and returns the ids of every matching pattern, sorted (nil for none). The error is
// for an event that is not a JSON object.
func (m *Matcher) Match(event []byte) ([]string, error) {
	s := m.snap.Load()
	if s == nil {
		s = m.build()
	}
	return s.match(event)
}

func (m *Matcher) build() *snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.snap.Load(); s != nil {
		return s
	}
	s := newSnapshot(m.patterns)
	m.snap.Store(s)
	return s
}

// snapshot is the immutable index of one set of patterns.
type snapshot struct {
	ids      []string // sorted; a pattern's number is its place here
	clauses  []mclause
	prog     *program
	index    []*pathIndex // by path id; nil for paths that drive no clause
	always   []int32      // clauses verified for every event
	abClause []int32      // anything-but predicate → clause
	pool     sync.Pool    // *matchState
}

type mclause struct {
	boundClause
	pat     int32
	trivial bool // its one condition drives it and the index finds exactly its values: a hit is a match
}

func newSnapshot(patterns map[string]*Pattern) *snapshot {
	s := &snapshot{prog: newProgram()}
	for id := range patterns {
		s.ids = append(s.ids, id)
	}
	slices.Sort(s.ids)
	for i, id := range s.ids {
		for _, cl := range patterns[id].clauses {
			s.clauses = append(s.clauses, mclause{boundClause: s.prog.bind(cl), pat: int32(i)})
		}
	}
	share := map[shareKey]int{}
	for i := range s.clauses {
		cl := &s.clauses[i]
		for k, c := range cl.conds {
			if c.kind != condPositive {
				continue
			}
			for j := range c.alts {
				share[keyOf(cl.paths[k], &c.alts[j])]++
			}
		}
	}
	s.index = make([]*pathIndex, s.prog.npaths())
	for i := range s.clauses {
		cl := &s.clauses[i]
		best, bestCost := -1, 0
		for k, c := range cl.conds {
			if c.kind != condPositive {
				continue
			}
			cost := 0
			for j := range c.alts {
				cost += share[keyOf(cl.paths[k], &c.alts[j])] + penalty(&c.alts[j])
			}
			if best < 0 || cost < bestCost {
				best, bestCost = k, cost
			}
		}
		if best < 0 {
			s.always = append(s.always, int32(i))
			continue
		}
		// A hit is a match when the clause's one condition drives it, unless the index only finds candidates.
		cl.trivial = len(cl.conds) == 1 && !slices.ContainsFunc(cl.conds[best].alts, func(a alt) bool {
			return a.kind == altFold || a.kind == altPrefixFold || a.kind == altSuffixFold
		})
		path := cl.paths[best]
		if s.index[path] == nil {
			s.index[path] = &pathIndex{}
		}
		c := cl.conds[best]
		for j := range c.alts {
			s.index[path].add(&c.alts[j], int32(i), func() int32 {
				s.abClause = append(s.abClause, int32(i))
				return int32(len(s.abClause) - 1)
			})
		}
	}
	for _, x := range s.index {
		if x != nil {
			x.finish()
		}
	}
	return s
}

// shareKey identifies an alternative at a path, to count the clauses that share it.
type shareKey struct {
	path int32
	kind altKind
	s    string
	n    float64
	rng  numRange
}

func keyOf(path int32, a *alt) shareKey {
	k := shareKey{path: path, kind: a.kind, s: a.s, n: a.n, rng: a.rng}
	switch a.kind {
	case altWildcard:
		k.s = a.wc.raw
	case altCIDR:
		k.s = a.cidr.String()
	}
	return k
}

// penalty prefers, at equal sharing, the alternatives whose index lookups find fewer clauses by accident.
func penalty(a *alt) int {
	switch a.kind {
	case altString, altNumber, altTrue, altFalse, altNull:
		return 0
	case altFold:
		return 1
	case altPrefix, altSuffix, altPrefixFold, altSuffixFold:
		return 2 + max(0, 8-len(a.s))
	case altNumeric, altCIDR:
		return 8
	case altWildcard:
		return 16
	case altExists:
		return 64
	default: // anything-but: satisfied by almost every value
		return 1 << 20
	}
}

// matchState is the working memory of one Match.
type matchState struct {
	ev        flatEvent
	sv        solver
	gen       uint32
	clauseGen []uint32
	patGen    []uint32
	mark      uint32
	abMark    []uint32
	matched   []int32
	hits      []hit
	ids       []int32
	fold      []byte
}

func (s *snapshot) state() *matchState {
	if st, ok := s.pool.Get().(*matchState); ok {
		return st
	}
	return &matchState{
		clauseGen: make([]uint32, len(s.clauses)),
		patGen:    make([]uint32, len(s.ids)),
		abMark:    make([]uint32, len(s.abClause)),
	}
}

func (st *matchState) next() {
	st.gen++
	if st.gen == 0 {
		clear(st.clauseGen)
		clear(st.patGen)
		st.gen = 1
	}
	st.matched = st.matched[:0]
}

func (st *matchState) nextMark() {
	st.mark++
	if st.mark == 0 {
		clear(st.abMark)
		st.mark = 1
	}
}

func (s *snapshot) match(event []byte) ([]string, error) {
	st := s.state()
	defer s.pool.Put(st)
	if err := st.ev.scan(event, s.prog.root, s.prog.npaths()); err != nil {
		return nil, err
	}
	st.next()
	for i := range st.ev.leaves {
		l := &st.ev.leaves[i]
		if x := s.index[l.path]; x != nil {
			s.lookup(st, x, l)
		}
	}
	for _, c := range s.always {
		s.consider(st, c)
	}
	if len(st.matched) == 0 {
		return nil, nil
	}
	slices.Sort(st.matched)
	out := make([]string, len(st.matched))
	for i, p := range st.matched {
		out[i] = s.ids[p]
	}
	return out, nil
}

// consider verifies a clause found for the event, once per event.
func (s *snapshot) consider(st *matchState, c int32) {
	if st.clauseGen[c] == st.gen {
		return
	}
	st.clauseGen[c] = st.gen
	cl := &s.clauses[c]
	if st.patGen[cl.pat] == st.gen {
		return
	}
	if cl.trivial || st.sv.verify(&st.ev, cl.conds, cl.paths) {
		st.patGen[cl.pat] = st.gen
		st.matched = append(st.matched, cl.pat)
	}
}

func (s *snapshot) considerAll(st *matchState, ids []int32) {
	for _, c := range ids {
		s.consider(st, c)
	}
}

func (s *snapshot) considerHits(st *matchState, l *leaf) {
	for _, h := range st.hits {
		if h.wc == nil || h.wc.match(l.str) {
			s.consider(st, h.id)
		}
	}
}

func (s *snapshot) lookup(st *matchState, x *pathIndex, l *leaf) {
	s.considerAll(st, x.exists)
	switch l.kind {
	case lString:
		if x.strs != nil {
			s.considerAll(st, x.strs[string(l.str)])
		}
		if x.prefix != nil {
			st.hits = x.prefix.collect(st.hits[:0], l.str, false)
			s.considerHits(st, l)
		}
		if x.suffix != nil {
			st.hits = x.suffix.collect(st.hits[:0], l.str, true)
			s.considerHits(st, l)
		}
		if x.folds != nil || x.prefixFold != nil || x.suffixFold != nil {
			st.fold = appendCaseKey(st.fold[:0], l.str)
			if x.folds != nil {
				s.considerAll(st, x.folds[string(st.fold)])
			}
			if x.prefixFold != nil {
				st.hits = x.prefixFold.collect(st.hits[:0], st.fold, false)
				s.considerHits(st, l)
			}
			if x.suffixFold != nil {
				st.hits = x.suffixFold.collect(st.hits[:0], st.fold, true)
				s.considerHits(st, l)
			}
		}
		if x.cidr != nil {
			if ip, ok := parseIP(l.str); ok {
				st.ids = x.cidr.collect(st.ids[:0], ip)
				s.considerAll(st, st.ids)
			}
		}
	case lNumber:
		if x.nums != nil {
			k := l.numberKey()
			s.considerAll(st, x.nums[k])
			if k.exact != "" { // numeric "=" compares doubles
				s.considerAll(st, x.nums[numKey{f: k.f}])
			}
		}
		if x.numeric != nil {
			st.ids = x.numeric.collect(st.ids[:0], l.num)
			s.considerAll(st, st.ids)
		}
	case lTrue:
		s.considerAll(st, x.trues)
	case lFalse:
		s.considerAll(st, x.falses)
	case lNull:
		s.considerAll(st, x.nulls)
	}
	if x.ab != nil {
		s.lookupAnythingBut(st, x.ab, l)
	}
}

// lookupAnythingBut considers the clauses of the anything-but predicates that the leaf satisfies.
func (s *snapshot) lookupAnythingBut(st *matchState, x *abIndex, l *leaf) {
	st.nextMark()
	exclude := func(ids []int32) {
		for _, id := range ids {
			st.abMark[id] = st.mark
		}
	}
	var big *abList
	switch l.kind {
	case lString:
		big = x.strs[string(l.str)]
		if x.folds != nil {
			st.fold = appendCaseKey(st.fold[:0], l.str)
			for _, f := range x.folds[string(st.fold)] {
				if f.cs.equal(l.str) {
					st.abMark[f.id] = st.mark
				}
			}
		}
		for _, t := range []*trie{x.prefix, x.suffix} {
			if t == nil {
				continue
			}
			st.hits = t.collect(st.hits[:0], l.str, t == x.suffix)
			for _, h := range st.hits {
				if h.wc == nil || h.wc.match(l.str) {
					st.abMark[h.id] = st.mark
				}
			}
		}
	case lNumber:
		big = x.nums[l.numberKey()]
	}
	candidates := x.all
	if big != nil && big.hasComp {
		candidates = big.comp
	} else if big != nil {
		exclude(big.ids)
	}
	for _, id := range candidates {
		if st.abMark[id] != st.mark {
			s.consider(st, s.abClause[id])
		}
	}
}
