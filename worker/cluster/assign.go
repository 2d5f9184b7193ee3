package cluster

import (
	"cmp"
	"slices"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// Assign returns the owner of every task: the same answer on every worker given the same inputs. It is pure (no I/O,
// no clock, no randomness), never blocks and never fails; every worker of the cluster calls it with the live members
// and the task list it sees, and the task leases decide who actually runs a task while views differ.
//
// members are the ids of the live workers (any order; duplicates are ignored). tasks are the tasks that must run (any
// order; duplicates are ignored). current is the present owner of tasks, from their leases; entries naming a member
// that is not live, or a task not in tasks, are ignored. Neither argument is modified.
//
// Rules:
//
//  1. No members: the result is an empty map. Otherwise every task gets exactly one live member and the result has no
//     other keys. The result depends only on the sets given, never on input order or map iteration order.
//  2. Balance: with n tasks and m members every member ends with floor(n/m) or ceil(n/m) tasks (its quota). The
//     n mod m ceil quotas go to the members that currently own the most tasks (so the fewest tasks move), ties broken
//     by the smaller member id.
//  3. Stickiness: a task whose current owner is live stays with it unless that owner owns more than its quota. An
//     over-quota member gives up exactly its excess, one task at a time: a task of the connector it then holds the most
//     tasks of (ties: the greater connector name), the greatest task number of that connector.
//  4. Unowned tasks (new, or whose owner is not live) and given-up tasks are placed in TaskID order on the members
//     still under quota, preferring the member holding the fewest tasks of the same connector (this spreads one
//     connector's tasks across workers), then the member holding the fewest tasks, then the smaller member id.
//  5. Minimal moves: as a consequence, Moves(current, Assign(members, tasks, current)) holds only tasks that were
//     removed, new, lost with a dead owner, or given up to restore balance, and the given-up tasks are the fewest
//     that any balanced assignment needs. A member that gives up tasks receives none.
//  6. TaskIDs are ordered by Connector, then Task.
func Assign(members []string, tasks []rpc.TaskID, current map[rpc.TaskID]string) map[rpc.TaskID]string {
	live := slices.Clone(members)
	slices.Sort(live)
	live = slices.Compact(live)
	if len(live) == 0 {
		return map[rpc.TaskID]string{}
	}
	index := make(map[string]int, len(live))
	for i, id := range live {
		index[id] = i
	}

	all := slices.Clone(tasks)
	slices.SortFunc(all, assignCompare)
	all = slices.Compact(all)

	// held[i] are the tasks member i currently owns, in TaskID order because all is sorted.
	held := make([][]rpc.TaskID, len(live))
	var pool []rpc.TaskID
	for _, t := range all {
		if owner, ok := current[t]; ok {
			if i, ok := index[owner]; ok {
				held[i] = append(held[i], t)
				continue
			}
		}
		pool = append(pool, t)
	}

	quota := assignQuotas(live, held, len(all))
	for i := range live {
		if excess := len(held[i]) - quota[i]; excess > 0 {
			var given []rpc.TaskID
			held[i], given = assignShed(held[i], excess)
			pool = append(pool, given...)
		}
	}

	out := make(map[rpc.TaskID]string, len(all))
	load := make([]int, len(live))
	perConnector := make([]map[string]int, len(live))
	for i, id := range live {
		perConnector[i] = make(map[string]int)
		for _, t := range held[i] {
			out[t] = id
			perConnector[i][t.Connector]++
		}
		load[i] = len(held[i])
	}

	// Placing in TaskID order keeps one connector's tasks together, so the per-connector preference spreads them.
	slices.SortFunc(pool, assignCompare)
	for _, t := range pool {
		best := -1
		for i := range live {
			if load[i] >= quota[i] {
				continue
			}
			if best < 0 || assignBetter(perConnector[i][t.Connector], load[i], perConnector[best][t.Connector], load[best]) {
				best = i
			}
		}
		// The quotas sum to len(all) and every member holds at most its quota, so a member under quota always
		// remains while pool tasks are left: best >= 0.
		out[t] = live[best]
		load[best]++
		perConnector[best][t.Connector]++
	}
	return out
}

// Place returns an owner among members for each of tasks that are new since an assignment which left each member
// load[member] tasks (members absent from load hold none): Assign's rule 4 without quotas, so that every worker
// that computed the same assignment places the same new tasks on the same members without reading the claims.
// Tasks are placed in TaskID order, each on the member holding the fewest tasks of the same connector among those
// placed, then the fewest tasks in all (load and those placed), then the smaller id. Like Assign it is pure,
// depends only on the sets given and modifies neither argument; no members: an empty map.
func Place(members []string, load map[string]int, tasks []rpc.TaskID) map[rpc.TaskID]string {
	live := slices.Clone(members)
	slices.Sort(live)
	live = slices.Compact(live)
	all := slices.Clone(tasks)
	slices.SortFunc(all, assignCompare)
	all = slices.Compact(all)
	out := make(map[rpc.TaskID]string, len(all))
	if len(live) == 0 {
		return out
	}
	held := make([]int, len(live))
	for i, id := range live {
		held[i] = load[id]
	}
	perConnector := make([]map[string]int, len(live))
	for i := range perConnector {
		perConnector[i] = make(map[string]int)
	}
	for _, t := range all {
		best := 0
		for i := 1; i < len(live); i++ {
			if assignBetter(perConnector[i][t.Connector], held[i], perConnector[best][t.Connector], held[best]) {
				best = i
			}
		}
		out[t] = live[best]
		held[best]++
		perConnector[best][t.Connector]++
	}
	return out
}

// Moves lists the tasks whose owner differs between two assignments, for logs and tests, in TaskID order (Connector,
// then Task). A task present in only one of the two counts as moved. It never fails; nil maps are empty.
func Moves(before, after map[rpc.TaskID]string) []rpc.TaskID {
	var moved []rpc.TaskID
	for t, owner := range before {
		if next, ok := after[t]; !ok || next != owner {
			moved = append(moved, t)
		}
	}
	for t := range after {
		if _, ok := before[t]; !ok {
			moved = append(moved, t)
		}
	}
	slices.SortFunc(moved, assignCompare)
	return moved
}

// assignCompare orders TaskIDs by Connector, then Task.
func assignCompare(a, b rpc.TaskID) int {
	if c := cmp.Compare(a.Connector, b.Connector); c != 0 {
		return c
	}
	return cmp.Compare(a.Task, b.Task)
}

// assignQuotas returns the number of tasks each member ends with: n/m each, plus one for the n mod m members that
// own the most tasks now (ties: smaller id, which is the smaller index since live is sorted).
func assignQuotas(live []string, held [][]rpc.TaskID, n int) []int {
	m := len(live)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(len(held[b]), len(held[a])); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	quota := make([]int, m)
	for rank, i := range order {
		quota[i] = n / m
		if rank < n%m {
			quota[i]++
		}
	}
	return quota
}

// assignShed removes excess tasks from owned (sorted in TaskID order) and returns the kept and the given-up tasks.
// Each step gives up the greatest task of the connector the member then holds the most tasks of (ties: the greater
// connector name), so a member crowded with one connector sheds that connector first.
func assignShed(owned []rpc.TaskID, excess int) (kept, given []rpc.TaskID) {
	kept = slices.Clone(owned)
	count := make(map[string]int)
	for _, t := range kept {
		count[t.Connector]++
	}
	for range excess {
		victim := -1
		for j, t := range kept {
			if victim < 0 {
				victim = j
				continue
			}
			v := kept[victim]
			switch {
			case count[t.Connector] > count[v.Connector]:
				victim = j
			case count[t.Connector] == count[v.Connector] && assignCompare(t, v) > 0:
				victim = j
			}
		}
		t := kept[victim]
		given = append(given, t)
		count[t.Connector]--
		kept = slices.Delete(kept, victim, victim+1)
	}
	return kept, given
}

// assignBetter reports whether a candidate holding sameA tasks of the task's connector and loadA tasks in all beats
// the current best (sameB, loadB). Equal candidates keep the earlier one, which has the smaller id.
func assignBetter(sameA, loadA, sameB, loadB int) bool {
	if sameA != sameB {
		return sameA < sameB
	}
	return loadA < loadB
}
