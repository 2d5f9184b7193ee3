package pattern

import (
	"math"
	"net/netip"
	"slices"
	"sort"
)

// pathIndex finds, for a leaf at one path, the clauses whose driving condition it satisfies: hash maps for exact
// and ignore-case values, byte tries for prefixes and suffixes (and for the literal start of wildcards), a
// segment tree for numeric ranges, a map per prefix length for networks, and an "all except" index for
// anything-but. Each lookup costs about the length of the value plus the number of clauses it finds. The
// ignore-case maps and tries are keyed by case keys (appendCaseKey), which every value an operand matches
// shares with it but some other values do too: what they find is a candidate, verified against the event.
type pathIndex struct {
	strs                 map[string][]int32
	nums                 map[numKey][]int32 // exact values; numeric "=" ranges under their double alone
	folds                map[string][]int32
	trues, falses, nulls []int32
	exists               []int32
	prefix, suffix       *trie // suffix keys are reversed
	prefixFold           *trie
	suffixFold           *trie
	ranges               []rangeHit
	numeric              *intervals
	cidr                 *cidrIndex
	ab                   *abIndex
}

func (x *pathIndex) add(a *alt, clause int32, abPred func() int32) {
	switch a.kind {
	case altString:
		x.strs = addTo(x.strs, a.s, clause)
	case altNumber:
		x.nums = addTo(x.nums, numKey{f: a.n, exact: a.s}, clause)
	case altTrue:
		x.trues = append(x.trues, clause)
	case altFalse:
		x.falses = append(x.falses, clause)
	case altNull:
		x.nulls = append(x.nulls, clause)
	case altExists:
		x.exists = append(x.exists, clause)
	case altFold:
		x.folds = addTo(x.folds, a.cs.key, clause)
	case altPrefix:
		x.prefix = insert(x.prefix, []byte(a.s), false, hit{id: clause})
	case altWildcard:
		x.prefix = insert(x.prefix, a.wc.literalPrefix(), false, hit{id: clause, wc: a.wc})
	case altSuffix:
		x.suffix = insert(x.suffix, []byte(a.s), true, hit{id: clause})
	case altPrefixFold:
		x.prefixFold = insert(x.prefixFold, []byte(a.cs.key), false, hit{id: clause})
	case altSuffixFold:
		x.suffixFold = insert(x.suffixFold, []byte(a.cs.key), true, hit{id: clause})
	case altNumeric:
		if a.rng.lo == a.rng.hi {
			x.nums = addTo(x.nums, numKey{f: a.rng.lo}, clause)
		} else {
			x.ranges = append(x.ranges, rangeHit{r: a.rng, id: clause})
		}
	case altCIDR:
		if x.cidr == nil {
			x.cidr = &cidrIndex{}
		}
		x.cidr.add(a.cidr, clause)
	case altAnythingBut:
		if x.ab == nil {
			x.ab = &abIndex{}
		}
		x.ab.add(abPred(), a.ab)
	}
}

func addTo[K comparable, V any](m map[K][]V, k K, v V) map[K][]V {
	if m == nil {
		m = map[K][]V{}
	}
	m[k] = append(m[k], v)
	return m
}

func insert(t *trie, key []byte, reverse bool, h hit) *trie {
	if t == nil {
		t = &trie{nodes: []trieNode{{}}}
	}
	t.insert(key, reverse, h)
	return t
}

func (x *pathIndex) finish() {
	for _, t := range []*trie{x.prefix, x.suffix, x.prefixFold, x.suffixFold} {
		if t != nil {
			t.finish()
		}
	}
	if len(x.ranges) > 0 {
		x.numeric = newIntervals(x.ranges)
		x.ranges = nil
	}
	if x.ab != nil {
		x.ab.finish()
	}
}

// hit is an entry of a trie: a clause (or an anything-but predicate) and, for a wildcard found through its
// literal start, the wildcard the whole value must still match.
type hit struct {
	id int32
	wc *wildcard
}

// trie maps byte strings to hits; collect walks a value once and gathers the hits of every key that starts it.
type trie struct {
	nodes []trieNode
}

type trieNode struct {
	hits  []hit
	keys  []byte
	kids  []int32
	dense []int32 // kids by byte, for nodes with many children
}

func (t *trie) child(n int32, c byte) int32 {
	nd := &t.nodes[n]
	if nd.dense != nil {
		return nd.dense[c]
	}
	for i, k := range nd.keys {
		if k == c {
			return nd.kids[i]
		}
	}
	return -1
}

func (t *trie) insert(key []byte, reverse bool, h hit) {
	n := int32(0)
	for i := range key {
		c := key[i]
		if reverse {
			c = key[len(key)-1-i]
		}
		next := t.child(n, c)
		if next < 0 {
			next = int32(len(t.nodes))
			t.nodes = append(t.nodes, trieNode{})
			t.nodes[n].keys = append(t.nodes[n].keys, c)
			t.nodes[n].kids = append(t.nodes[n].kids, next)
		}
		n = next
	}
	t.nodes[n].hits = append(t.nodes[n].hits, h)
}

func (t *trie) finish() {
	for i := range t.nodes {
		nd := &t.nodes[i]
		if len(nd.keys) > 8 {
			nd.dense = make([]int32, 256)
			for j := range nd.dense {
				nd.dense[j] = -1
			}
			for j, k := range nd.keys {
				nd.dense[k] = nd.kids[j]
			}
		}
	}
}

// collect appends the hits of every key that is a prefix of v (reverse: a suffix).
func (t *trie) collect(dst []hit, v []byte, reverse bool) []hit {
	n := int32(0)
	dst = append(dst, t.nodes[0].hits...)
	for i := range v {
		c := v[i]
		if reverse {
			c = v[len(v)-1-i]
		}
		if n = t.child(n, c); n < 0 {
			break
		}
		dst = append(dst, t.nodes[n].hits...)
	}
	return dst
}

type rangeHit struct {
	r  numRange
	id int32
}

// intervals answers "which ranges contain x" in O(log n + answers): the distinct finite ends of the ranges cut
// the number line into slots (each end, and the open stretches between ends); a segment tree over the slots
// stores each range at O(log n) nodes, and the nodes on the path from a slot to the root hold exactly the ranges
// that contain the slot.
type intervals struct {
	points []float64
	size   int
	start  []int32 // node i's ranges are ids[start[i]:start[i+1]]
	ids    []int32
}

func newIntervals(rs []rangeHit) *intervals {
	iv := &intervals{}
	for _, h := range rs {
		for _, p := range []float64{h.r.lo, h.r.hi} {
			if !math.IsInf(p, 0) {
				iv.points = append(iv.points, p)
			}
		}
	}
	slices.Sort(iv.points)
	iv.points = slices.Compact(iv.points)
	slots := 2*len(iv.points) + 1
	iv.size = 1
	for iv.size < slots {
		iv.size *= 2
	}
	nodes := func(h rangeHit, visit func(node int)) {
		a, b := iv.slotRange(h.r)
		for l, r := a+iv.size, b+iv.size+1; l < r; l, r = l/2, r/2 {
			if l&1 == 1 {
				visit(l)
				l++
			}
			if r&1 == 1 {
				r--
				visit(r)
			}
		}
	}
	count := make([]int32, 2*iv.size+1)
	for _, h := range rs {
		nodes(h, func(n int) { count[n+1]++ })
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	iv.start = slices.Clone(count)
	iv.ids = make([]int32, count[len(count)-1])
	for _, h := range rs {
		nodes(h, func(n int) {
			iv.ids[count[n]] = h.id
			count[n]++
		})
	}
	return iv
}

// slot is 2j+1 for x equal to points[j], 2j for x between points[j-1] and points[j].
func (iv *intervals) slot(x float64) int {
	j := sort.SearchFloat64s(iv.points, x)
	if j < len(iv.points) && iv.points[j] == x {
		return 2*j + 1
	}
	return 2 * j
}

func (iv *intervals) slotRange(r numRange) (a, b int) {
	a, b = 0, 2*len(iv.points)
	if !math.IsInf(r.lo, 0) {
		a = iv.slot(r.lo)
		if r.loOpen {
			a++
		}
	}
	if !math.IsInf(r.hi, 0) {
		b = iv.slot(r.hi)
		if r.hiOpen {
			b--
		}
	}
	return a, b
}

func (iv *intervals) collect(dst []int32, x float64) []int32 {
	for n := iv.slot(x) + iv.size; n >= 1; n /= 2 {
		dst = append(dst, iv.ids[iv.start[n]:iv.start[n+1]]...)
	}
	return dst
}

// cidrIndex finds networks that contain an address: one map lookup per distinct prefix length.
type cidrIndex struct {
	fams [2]struct {
		bits []int
		nets map[netip.Prefix][]int32
	}
}

func family(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

func (x *cidrIndex) add(p netip.Prefix, id int32) {
	f := &x.fams[family(p.Addr())]
	f.nets = addTo(f.nets, p, id)
	if !slices.Contains(f.bits, p.Bits()) {
		f.bits = append(f.bits, p.Bits())
		slices.Sort(f.bits)
	}
}

func (x *cidrIndex) collect(dst []int32, a netip.Addr) []int32 {
	f := &x.fams[family(a)]
	for _, b := range f.bits {
		if p, err := a.Prefix(b); err == nil {
			dst = append(dst, f.nets[p]...)
		}
	}
	return dst
}

// abIndex finds the anything-but predicates of a path that a leaf satisfies: all of them but those that exclude
// it. The excluding ones come from maps and tries; when one list excludes more than half of the predicates its
// complement is kept, so a lookup costs about the number of predicates satisfied plus the number excluded by
// the other lists, rather than the number of predicates. Ignore-case operands are found by their case key and
// each is checked against the value.
type abIndex struct {
	all    []int32
	strs   map[string]*abList
	nums   map[numKey]*abList
	folds  map[string][]abFold
	prefix *trie // prefixes, and wildcards through their literal start
	suffix *trie
}

// abFold is an anything-but equals-ignore-case operand of a predicate.
type abFold struct {
	id int32
	cs *caseSeq
}

type abList struct {
	ids, comp []int32
	hasComp   bool
}

func addList[K comparable](m map[K]*abList, k K, id int32) map[K]*abList {
	if m == nil {
		m = map[K]*abList{}
	}
	l := m[k]
	if l == nil {
		l = &abList{}
		m[k] = l
	}
	l.ids = append(l.ids, id)
	return m
}

func (x *abIndex) add(id int32, ab *anythingBut) {
	x.all = append(x.all, id)
	for _, s := range ab.strs {
		x.strs = addList(x.strs, s, id)
	}
	for _, n := range ab.nums {
		x.nums = addList(x.nums, n, id)
	}
	for _, f := range ab.folds {
		x.folds = addTo(x.folds, f.key, abFold{id: id, cs: f})
	}
	for _, p := range ab.prefixes {
		x.prefix = insert(x.prefix, []byte(p), false, hit{id: id})
	}
	for _, w := range ab.wildcards {
		x.prefix = insert(x.prefix, w.literalPrefix(), false, hit{id: id, wc: w})
	}
	for _, s := range ab.suffixes {
		x.suffix = insert(x.suffix, []byte(s), true, hit{id: id})
	}
}

func (x *abIndex) finish() {
	slices.Sort(x.all)
	x.all = slices.Compact(x.all)
	lists := func(l *abList) {
		slices.Sort(l.ids)
		l.ids = slices.Compact(l.ids)
		if len(l.ids) > len(x.all)/2 {
			l.hasComp = true
			for _, id := range x.all {
				if _, found := slices.BinarySearch(l.ids, id); !found {
					l.comp = append(l.comp, id)
				}
			}
		}
	}
	for _, l := range x.strs {
		lists(l)
	}
	for _, l := range x.nums {
		lists(l)
	}
	for _, t := range []*trie{x.prefix, x.suffix} {
		if t != nil {
			t.finish()
		}
	}
}
