package pattern

import (
	"cmp"
	"slices"
)

// solver decides whether a clause holds for a scanned event, array consistency included.
//
// The leaves that conditions may use are grouped by array context: at a context (the event itself, then an
// element of an array that is an object or an array; a scalar element lies in the context of its array), a leaf
// directly in it is consistent with every choice made inside it, so a condition satisfied there is done and an
// exists:false condition with a leaf there fails. The other leaves lie in the arrays directly below; the
// conditions with leaves in one such array must all use the same element of it, and one of them must use it
// positively (an element is only chosen by a leaf that a condition uses; exists:false alone looks at the whole
// array). Without dotted keys in the event, the leaves of one condition are in at most one of those arrays, and
// the search is a polynomial walk down the event; dotted keys that make several arrays possible are tried one
// assignment at a time, within a budget.
type solver struct {
	ents    []entry
	flags   []uint8    // by condition, while a context is classified
	roles   []condKind // by condition: its role below + 1, while the entries below are gathered
	last    []int32    // by condition: the array of its last entry below, while they are checked
	choices int        // assignments left to try in this verification
}

type entry struct {
	leaf int32
	cond int32
	anc  int32 // the array element below the current context that holds the leaf
	arr  int32 // the array of anc
	role condKind
	sat  bool
}

type member struct {
	cond int32
	role condKind
}

const maxChoices = 4096

const (
	fLeafHere = 1 << iota
	fSatHere
	fBelow
	fSatBelow
)

// verify reports whether the conditions (the paths of which are ids of ev's program) hold together for ev.
func (s *solver) verify(ev *flatEvent, conds []*condition, paths []int32) bool {
	s.ents = s.ents[:0]
	nested := false
	for ci, c := range conds {
		hasSat, rootLeaf := false, false
		for li := ev.first(paths[ci]); li >= 0; li = ev.leaves[li].next {
			l := &ev.leaves[li]
			sat := c.kind != condAbsent && c.matches(l)
			hasSat = hasSat || sat
			if l.ctx == 0 {
				rootLeaf = true
			}
			if sat || c.kind != condPositive {
				s.ents = append(s.ents, entry{leaf: li, cond: int32(ci), sat: sat, role: c.kind})
				nested = nested || l.ctx != 0
			}
		}
		switch {
		case c.kind == condPositive && !hasSat,
			c.kind == condAbsent && rootLeaf,
			c.kind == condMixed && rootLeaf && !hasSat:
			return false
		}
	}
	if !nested {
		// Every leaf is consistent with every other: the checks above decided.
		return true
	}
	if cap(s.flags) < len(conds) {
		s.flags = make([]uint8, len(conds))
		s.roles = make([]condKind, len(conds))
		s.last = make([]int32, len(conds))
	}
	s.flags, s.roles, s.last = s.flags[:len(conds)], s.roles[:len(conds)], s.last[:len(conds)]
	members := make([]member, len(conds))
	for i, c := range conds {
		members[i] = member{cond: int32(i), role: c.kind}
	}
	s.choices = maxChoices
	ok, _ := s.solve(ev, members, s.ents, 0)
	return ok
}

// roleOptional marks a member satisfied by a leaf directly in the context that may still be used in an array
// below, to choose the element there (which can make an exists:false member hold). Only dotted keys give one
// member leaves both directly in a context and below it.
const roleOptional condKind = condMixed + 1

// solve decides the members at a context of the given depth, with their entries in its subtree. pos tells that a
// member uses a leaf inside it.
func (s *solver) solve(ev *flatEvent, members []member, ents []entry, depth int32) (ok, pos bool) {
	for _, m := range members {
		s.flags[m.cond] = 0
	}
	for i := range ents {
		e := &ents[i]
		if ev.ctxs[ev.leaves[e.leaf].ctx].depth == depth {
			s.flags[e.cond] |= fLeafHere
			if e.sat {
				s.flags[e.cond] |= fSatHere
			}
		} else {
			s.flags[e.cond] |= fBelow
			if e.sat {
				s.flags[e.cond] |= fSatBelow
			}
		}
	}
	// below holds the role each remaining member plays in the arrays below.
	var below, optional []member
	negative := false
	for _, m := range members {
		f := s.flags[m.cond]
		switch {
		case m.role != condAbsent && f&fSatHere != 0:
			pos = true
			if f&fSatBelow != 0 {
				optional = append(optional, member{m.cond, roleOptional})
			}
		case m.role == condAbsent && f&fLeafHere != 0:
			return false, false
		case m.role == condPositive || (m.role == condMixed && f&fLeafHere != 0):
			if f&fSatBelow == 0 {
				return false, false
			}
			below = append(below, member{m.cond, condPositive})
		case f&fBelow != 0:
			below = append(below, m)
			negative = true
		}
	}
	if negative {
		below = append(below, optional...)
	}
	if len(below) == 0 {
		return true, pos
	}
	for _, m := range below {
		s.roles[m.cond] = m.role + 1
	}
	var rel []entry
	for _, e := range ents {
		r := s.roles[e.cond] - 1
		l := &ev.leaves[e.leaf]
		if s.roles[e.cond] == 0 || ev.ctxs[l.ctx].depth == depth || ((r == condPositive || r == roleOptional) && !e.sat) {
			continue
		}
		c := l.ctx
		for ev.ctxs[c].depth > depth+1 {
			c = ev.ctxs[c].parent
		}
		e.anc, e.arr, e.role = c, ev.ctxs[c].array, r
		rel = append(rel, e)
	}
	for _, m := range below {
		s.roles[m.cond] = 0
	}
	slices.SortFunc(rel, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.arr, b.arr), cmp.Compare(a.anc, b.anc))
	})
	if len(optional) == 0 || !negative {
		// Unless dotted keys give a member leaves in two arrays, the arrays below are independent.
		for _, m := range below {
			s.last[m.cond] = -1
		}
		single := true
		for _, e := range rel {
			if l := s.last[e.cond]; l >= 0 && l != e.arr {
				single = false
				break
			}
			s.last[e.cond] = e.arr
		}
		if single {
			return s.groups(ev, rel, depth), true
		}
	}
	// A member with leaves in several arrays (dotted keys) must be assigned: used positively in one of the
	// arrays where a leaf satisfies it or, if it allows absence, in none; an optional member in one of its
	// arrays or in none.
	arrays, satArrays := map[int32][]int32{}, map[int32][]int32{}
	for _, e := range rel {
		if a := arrays[e.cond]; len(a) == 0 || a[len(a)-1] != e.arr {
			arrays[e.cond] = append(a, e.arr)
		}
		if a := satArrays[e.cond]; e.sat && !slices.Contains(a, e.arr) {
			satArrays[e.cond] = append(a, e.arr)
		}
	}
	var split []member
	for _, m := range below {
		if m.role == roleOptional || (len(arrays[m.cond]) > 1 && m.role != condAbsent) {
			split = append(split, m)
		}
	}
	if len(split) == 0 {
		return s.groups(ev, rel, depth), true
	}
	pick := make([]int, len(split))
	for {
		if s.choices <= 0 {
			return false, false
		}
		s.choices--
		var try []entry
		for _, e := range rel {
			keep := true
			for i, m := range split {
				if m.cond != e.cond {
					continue
				}
				switch opts := satArrays[m.cond]; {
				case pick[i] < len(opts):
					keep = e.arr == opts[pick[i]] && e.sat
					e.role = condPositive
				case m.role == roleOptional:
					keep = false
				default:
					e.role = condAbsent
				}
			}
			if keep {
				try = append(try, e)
			}
		}
		if s.groups(ev, try, depth) {
			return true, pos || len(try) > 0
		}
		// next assignment
		i := 0
		for ; i < len(split); i++ {
			n := len(satArrays[split[i].cond])
			if split[i].role != condPositive {
				n++
			}
			pick[i]++
			if pick[i] < n {
				break
			}
			pick[i] = 0
		}
		if i == len(split) {
			return false, false
		}
	}
}

// groups decides the arrays below a context: rel is sorted by array and element. Each array needs one element
// in which its members hold with one of them used positively.
func (s *solver) groups(ev *flatEvent, rel []entry, depth int32) bool {
	for len(rel) > 0 {
		n := 1
		for n < len(rel) && rel[n].arr == rel[0].arr {
			n++
		}
		group := rel[:n]
		rel = rel[n:]
		var members []member
		for _, e := range group {
			if !slices.ContainsFunc(members, func(m member) bool { return m.cond == e.cond }) {
				members = append(members, member{e.cond, e.role})
			}
		}
		found := false
		for len(group) > 0 && !found {
			k := 1
			for k < len(group) && group[k].anc == group[0].anc {
				k++
			}
			elem := group[:k]
			group = group[k:]
			ok, pos := s.solve(ev, members, elem, depth+1)
			found = ok && pos
		}
		if !found {
			return false
		}
	}
	return true
}
