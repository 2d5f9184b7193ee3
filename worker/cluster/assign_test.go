package cluster

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// assignTestTasks returns tasks 0..n-1 of each connector.
func assignTestTasks(n int, connectors ...string) []rpc.TaskID {
	var out []rpc.TaskID
	for _, c := range connectors {
		for i := range n {
			out = append(out, rpc.TaskID{Connector: c, Task: i})
		}
	}
	return out
}

// assignTestLoads counts the tasks of each member in an assignment.
func assignTestLoads(a map[rpc.TaskID]string) map[string]int {
	loads := make(map[string]int)
	for _, owner := range a {
		loads[owner]++
	}
	return loads
}

// assignTestMembers returns a random subset of pool, each member live with a chance of two in three.
func assignTestMembers(rng *rand.Rand, pool []string) []string {
	var members []string
	for _, w := range pool {
		if rng.IntN(3) > 0 {
			members = append(members, w)
		}
	}
	return members
}

// assignTestPrefixes returns a random prefix (fewer than n tasks) of the tasks of each connector.
func assignTestPrefixes(rng *rand.Rand, n int, connectors ...string) []rpc.TaskID {
	var tasks []rpc.TaskID
	for _, c := range connectors {
		for i := range rng.IntN(n) {
			tasks = append(tasks, rpc.TaskID{Connector: c, Task: i})
		}
	}
	return tasks
}

func TestAssignNoMembers(t *testing.T) {
	t.Parallel()
	tasks := assignTestTasks(3, "a")
	for name, members := range map[string][]string{"nil": nil, "empty": {}} {
		got := Assign(members, tasks, map[rpc.TaskID]string{tasks[0]: "w1"})
		if got == nil || len(got) != 0 {
			t.Errorf("%s: Assign = %v, want an empty non-nil map", name, got)
		}
	}
}

func TestAssignNoTasks(t *testing.T) {
	t.Parallel()
	got := Assign([]string{"w1", "w2"}, nil, map[rpc.TaskID]string{{Connector: "gone", Task: 0}: "w1"})
	if len(got) != 0 {
		t.Errorf("Assign = %v, want empty: a task not in tasks must not be assigned", got)
	}
}

// TestAssignAddFourthMember: 3 members hold 12 tasks (4 each); a 4th joins. Exactly 3 tasks move, all to the new
// member, one from each old member.
func TestAssignAddFourthMember(t *testing.T) {
	t.Parallel()
	tasks := assignTestTasks(4, "a", "b", "c")
	before := Assign([]string{"w1", "w2", "w3"}, tasks, nil)
	if got := assignTestLoads(before); !reflect.DeepEqual(got, map[string]int{"w1": 4, "w2": 4, "w3": 4}) {
		t.Fatalf("precondition: loads with 3 members = %v, want 4 each", got)
	}

	after := Assign([]string{"w4", "w2", "w3", "w1"}, tasks, before)
	moved := Moves(before, after)
	if len(moved) != 3 {
		t.Fatalf("moved %d tasks %v, want exactly 3", len(moved), moved)
	}
	from := make(map[string]int)
	for _, task := range moved {
		if after[task] != "w4" {
			t.Errorf("task %v moved to %s, want w4", task, after[task])
		}
		from[before[task]]++
	}
	if want := map[string]int{"w1": 1, "w2": 1, "w3": 1}; !reflect.DeepEqual(from, want) {
		t.Errorf("moved from %v, want one from each old member %v", from, want)
	}
	if got, want := assignTestLoads(after), map[string]int{"w1": 3, "w2": 3, "w3": 3, "w4": 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("loads after join = %v, want %v", got, want)
	}
	t.Logf("12 tasks, 3 -> 4 members: loads before %v, after %v, moved %v", assignTestLoads(before),
		assignTestLoads(after), moved)
}

// TestAssignRemoveMember: when a member leaves, only its tasks move, and they are spread over the survivors.
func TestAssignRemoveMember(t *testing.T) {
	t.Parallel()
	tasks := assignTestTasks(4, "a", "b", "c")
	before := Assign([]string{"w1", "w2", "w3", "w4"}, tasks, nil)
	after := Assign([]string{"w1", "w3", "w4"}, tasks, before)

	var lost []rpc.TaskID
	for task, owner := range before {
		if owner == "w2" {
			lost = append(lost, task)
		}
	}
	slices.SortFunc(lost, assignCompare)
	if len(lost) != 3 {
		t.Fatalf("precondition: w2 owns %v, want 3 tasks", lost)
	}
	if moved := Moves(before, after); !reflect.DeepEqual(moved, lost) {
		t.Errorf("moved %v, want only w2's tasks %v", moved, lost)
	}
	if got, want := assignTestLoads(after), map[string]int{"w1": 4, "w3": 4, "w4": 4}; !reflect.DeepEqual(got, want) {
		t.Errorf("loads after leave = %v, want %v", got, want)
	}
}

// TestAssignStable: feeding an assignment back in, or any balanced current assignment, moves nothing.
func TestAssignStable(t *testing.T) {
	t.Parallel()
	members := []string{"w1", "w2", "w3"}
	tasks := assignTestTasks(3, "a", "b", "c", "d")
	first := Assign(members, tasks, nil)
	if moved := Moves(first, Assign(members, tasks, first)); len(moved) != 0 {
		t.Errorf("re-assigning its own output moved %v", moved)
	}

	// Balanced but unlike what Assign picks from scratch (consecutive blocks of 4 tasks per member): kept as is.
	rotated := make(map[rpc.TaskID]string)
	for i, task := range tasks {
		rotated[task] = members[(i/4)%3]
	}
	if got := assignTestLoads(rotated); got["w1"] != 4 || got["w2"] != 4 || got["w3"] != 4 {
		t.Fatalf("precondition: rotated loads %v, want 4 each", got)
	}
	if moved := Moves(rotated, Assign(members, tasks, rotated)); len(moved) != 0 {
		t.Errorf("a balanced current assignment moved %v", moved)
	}
}

// TestAssignIgnoresStaleEntries: current entries naming a dead member or an unknown task are ignored.
func TestAssignIgnoresStaleEntries(t *testing.T) {
	t.Parallel()
	a0, a1, gone := rpc.TaskID{Connector: "a", Task: 0}, rpc.TaskID{Connector: "a", Task: 1}, rpc.TaskID{Connector: "z", Task: 9}
	current := map[rpc.TaskID]string{a0: "dead", a1: "w2", gone: "w1"}
	got := Assign([]string{"w1", "w2"}, []rpc.TaskID{a1, a0, a0}, current)
	want := map[rpc.TaskID]string{a0: "w1", a1: "w2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Assign = %v, want %v", got, want)
	}
}

func TestAssignQuotaAndPlacement(t *testing.T) {
	t.Parallel()
	x := func(i int) rpc.TaskID { return rpc.TaskID{Connector: "x", Task: i} }
	y := func(i int) rpc.TaskID { return rpc.TaskID{Connector: "y", Task: i} }
	cases := []struct {
		name    string
		members []string
		tasks   []rpc.TaskID
		current map[rpc.TaskID]string
		want    map[rpc.TaskID]string
	}{
		{
			name:    "ceil quota goes to the member owning more, so nothing moves",
			members: []string{"a", "b"},
			tasks:   []rpc.TaskID{x(0), x(1), x(2), x(3), x(4)},
			current: map[rpc.TaskID]string{x(0): "b", x(1): "b", x(2): "b", x(3): "a", x(4): "a"},
			want:    map[rpc.TaskID]string{x(0): "b", x(1): "b", x(2): "b", x(3): "a", x(4): "a"},
		},
		{
			name:    "ceil quota tie is broken by the smaller member id",
			members: []string{"b", "a"},
			tasks:   []rpc.TaskID{x(0), x(1), x(2)},
			want:    map[rpc.TaskID]string{x(0): "a", x(1): "b", x(2): "a"},
		},
		{
			name:    "over-quota member sheds the connector it holds most of, highest task first",
			members: []string{"a", "b"},
			tasks:   []rpc.TaskID{x(0), x(1), x(2), y(0)},
			current: map[rpc.TaskID]string{x(0): "a", x(1): "a", x(2): "a", y(0): "a"},
			want:    map[rpc.TaskID]string{x(0): "a", y(0): "a", x(1): "b", x(2): "b"},
		},
		{
			name:    "most-held connector is shed even when its name sorts first or last",
			members: []string{"a", "b"},
			tasks:   []rpc.TaskID{x(0), y(0), y(1), y(2)},
			current: map[rpc.TaskID]string{x(0): "a", y(0): "a", y(1): "a", y(2): "a"},
			want:    map[rpc.TaskID]string{x(0): "a", y(0): "a", y(1): "b", y(2): "b"},
		},
		{
			name:    "given-up tasks are placed in TaskID order",
			members: []string{"a", "b", "c"},
			tasks:   []rpc.TaskID{y(0), y(1), y(2)},
			current: map[rpc.TaskID]string{y(0): "c", y(1): "c", y(2): "c"},
			// c sheds y(2), then y(1); placed in order y(1) -> a, y(2) -> b (both empty, a has the smaller id).
			want: map[rpc.TaskID]string{y(0): "c", y(1): "a", y(2): "b"},
		},
		{
			name:    "equal counts shed the greater connector first",
			members: []string{"a", "b"},
			tasks:   []rpc.TaskID{x(0), x(1), y(0), y(1)},
			current: map[rpc.TaskID]string{x(0): "a", x(1): "a", y(0): "a", y(1): "a"},
			want:    map[rpc.TaskID]string{x(0): "a", x(1): "b", y(0): "a", y(1): "b"},
		},
		{
			name:    "new connector spreads over members before load decides",
			members: []string{"a", "b", "c"},
			tasks:   []rpc.TaskID{x(0), x(1), x(2), y(0), y(1), y(2)},
			current: map[rpc.TaskID]string{x(0): "a", x(1): "a", x(2): "b"},
			// b and c have no y and quota room; c is least loaded, then b, then a (quota 2 each).
			want: map[rpc.TaskID]string{x(0): "a", x(1): "a", x(2): "b", y(0): "c", y(1): "b", y(2): "c"},
		},
		{
			name:    "fewest tasks of the same connector beats fewest tasks",
			members: []string{"a", "b"},
			tasks:   []rpc.TaskID{x(0), x(1), y(0), y(1), y(2), y(3)},
			current: map[rpc.TaskID]string{y(0): "a", y(1): "a", x(0): "b"},
			// quotas 3 each. x(1): a holds no x but 2 tasks, b holds one x and 1 task -> a. Then only b has room.
			want: map[rpc.TaskID]string{y(0): "a", y(1): "a", x(1): "a", x(0): "b", y(2): "b", y(3): "b"},
		},
		{
			name:    "same-connector count decides before load, then load",
			members: []string{"a", "b", "c"},
			tasks:   []rpc.TaskID{x(0), x(1), x(2), x(3), y(0), y(1)},
			current: map[rpc.TaskID]string{x(0): "a", x(1): "a", y(0): "b"},
			// quotas 2 each; a is full. x(2): b and c have no x, c is lighter -> c. x(3): b has 0 x, c has 1 -> b
			// although both hold one task. y(1): only c has room.
			want: map[rpc.TaskID]string{x(0): "a", x(1): "a", y(0): "b", x(2): "c", x(3): "b", y(1): "c"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Assign(tc.members, tc.tasks, tc.current); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Assign = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAssignMoves(t *testing.T) {
	t.Parallel()
	a0, a1 := rpc.TaskID{Connector: "a", Task: 0}, rpc.TaskID{Connector: "a", Task: 1}
	b0, b1 := rpc.TaskID{Connector: "b", Task: 0}, rpc.TaskID{Connector: "b", Task: 1}
	cases := []struct {
		name          string
		before, after map[rpc.TaskID]string
		want          []rpc.TaskID
	}{
		{name: "both empty", want: nil},
		{name: "same", before: map[rpc.TaskID]string{a0: "w1"}, after: map[rpc.TaskID]string{a0: "w1"}, want: nil},
		{
			name:   "changed, added and removed, sorted",
			before: map[rpc.TaskID]string{b1: "w1", a1: "w1", b0: "w2"},
			after:  map[rpc.TaskID]string{b1: "w2", a0: "w1", b0: "w2"},
			want:   []rpc.TaskID{a0, a1, b1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Moves(tc.before, tc.after); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Moves = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestAssignProperties checks the rules on many random inputs against quantities computed independently of Assign:
// coverage, balance, stickiness, the minimal number of moves, and determinism under shuffling and duplicates.
func TestAssignProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(20261130, 1))
	pool := []string{"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"}
	connectors := []string{"a", "b", "c", "d", "e"}

	for n := range 3000 {
		// Live members: a random subset of the pool.
		members := assignTestMembers(rng, pool)
		tasks := assignTestPrefixes(rng, 8, connectors...)
		// Current: often the previous output of Assign for a different membership (the realistic case), otherwise
		// random owners, dead ones included, plus tasks that no longer exist.
		current := make(map[rpc.TaskID]string)
		if rng.IntN(2) == 0 {
			var earlier []string
			for _, w := range pool {
				if rng.IntN(2) == 0 {
					earlier = append(earlier, w)
				}
			}
			current = Assign(earlier, tasks, nil)
		} else {
			for _, task := range tasks {
				if rng.IntN(4) > 0 {
					current[task] = pool[rng.IntN(len(pool))]
				}
			}
		}
		for range rng.IntN(3) {
			current[rpc.TaskID{Connector: "gone", Task: rng.IntN(5)}] = pool[rng.IntN(len(pool))]
		}

		name := fmt.Sprintf("case %d (members %v, %d tasks)", n, members, len(tasks))
		got := Assign(members, tasks, current)
		assignCheckProperties(t, name, members, tasks, current, got)

		// Determinism: shuffled members and tasks with duplicates, and a fresh map with another insertion order.
		members2 := append(slices.Clone(members), members...)
		rng.Shuffle(len(members2), func(i, j int) { members2[i], members2[j] = members2[j], members2[i] })
		tasks2 := slices.Clone(tasks)
		if len(tasks) > 0 {
			tasks2 = append(tasks2, tasks[rng.IntN(len(tasks))])
		}
		rng.Shuffle(len(tasks2), func(i, j int) { tasks2[i], tasks2[j] = tasks2[j], tasks2[i] })
		keys := slices.Collect(maps.Keys(current))
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		current2 := make(map[rpc.TaskID]string, len(keys))
		for _, k := range keys {
			current2[k] = current[k]
		}
		if got2 := Assign(members2, tasks2, current2); !reflect.DeepEqual(got, got2) {
			t.Fatalf("%s: not deterministic: %v vs %v (moves %v)", name, got, got2, Moves(got, got2))
		}
	}
}

// assignCheckProperties verifies one Assign result without reusing Assign's own helpers.
func assignCheckProperties(t *testing.T, name string, members []string, tasks []rpc.TaskID,
	current, got map[rpc.TaskID]string) {
	t.Helper()
	live := make(map[string]bool)
	for _, w := range members {
		live[w] = true
	}
	taskSet := make(map[rpc.TaskID]bool)
	for _, task := range tasks {
		taskSet[task] = true
	}
	if len(live) == 0 {
		if len(got) != 0 {
			t.Fatalf("%s: no members but %v", name, got)
		}
		return
	}

	// Coverage: exactly the tasks, each on a live member.
	if len(got) != len(taskSet) {
		t.Fatalf("%s: %d tasks assigned, want %d", name, len(got), len(taskSet))
	}
	for task, owner := range got {
		if !taskSet[task] || !live[owner] {
			t.Fatalf("%s: %v -> %q is not a task or not a live member", name, task, owner)
		}
	}

	// Balance: every live member ends with floor or ceil of n/m.
	n, m := len(taskSet), len(live)
	loads := assignTestLoads(got)
	for w := range live {
		if l := loads[w]; l != n/m && l != (n+m-1)/m {
			t.Fatalf("%s: %s holds %d tasks, want %d or %d (loads %v)", name, w, l, n/m, (n+m-1)/m, loads)
		}
	}

	// What each live member validly owned before.
	held := make(map[string][]rpc.TaskID)
	for task, owner := range current {
		if taskSet[task] && live[owner] {
			held[owner] = append(held[owner], task)
		}
	}

	// Stickiness: a member not over its final quota keeps all it held; an over-quota member keeps exactly its quota
	// of its own tasks and receives nothing new. Count the tasks taken from live owners.
	taken := 0
	for w := range live {
		kept := 0
		for _, task := range held[w] {
			if got[task] == w {
				kept++
			}
		}
		if len(held[w]) <= loads[w] && kept != len(held[w]) {
			t.Fatalf("%s: %s is within quota (%d held, %d final) but kept only %d", name, w, len(held[w]), loads[w], kept)
		}
		if len(held[w]) > loads[w] && kept != loads[w] {
			t.Fatalf("%s: %s is over quota (%d held, %d final) but kept %d of its own", name, w, len(held[w]), loads[w], kept)
		}
		taken += len(held[w]) - kept
	}

	// Minimal moves: the ceil quotas go to the members holding the most, so the excess given up is the least any
	// balanced assignment needs.
	counts := make([]int, 0, m)
	for w := range live {
		counts = append(counts, len(held[w]))
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	minimal := 0
	for rank, c := range counts {
		q := n / m
		if rank < n%m {
			q++
		}
		minimal += max(0, c-q)
	}
	if taken != minimal {
		t.Fatalf("%s: %d tasks taken from live owners, minimum is %d (held %v, final loads %v)", name, taken, minimal, held, loads)
	}

	// Every move is a removed task, a task without a live owner, or a given-up one (counted above).
	for _, task := range Moves(current, got) {
		owner, owned := current[task]
		if taskSet[task] && owned && live[owner] && len(held[owner]) <= loads[owner] {
			t.Fatalf("%s: %v moved away from %s, which was within quota", name, task, owner)
		}
	}
}

// Place puts new connectors' tasks where the next full assignment leaves them: after any assignment by Assign,
// Assign over the old and the new tasks, with the new ones owned as Place put them, moves no task (the placement
// is balanced and sticky). It is deterministic, and an empty membership places nothing.
func TestPlaceAgreesWithTheNextAssignment(t *testing.T) {
	t.Parallel()
	if got := Place(nil, map[string]int{"w1": 3}, assignTestTasks(2, "a")); len(got) != 0 {
		t.Fatalf("Place without members = %v, want nothing placed", got)
	}
	rng := rand.New(rand.NewPCG(20261204, 2))
	pool := []string{"w0", "w1", "w2", "w3", "w4"}
	for n := range 3000 {
		members := assignTestMembers(rng, pool)
		old := assignTestPrefixes(rng, 6, "a", "b", "c", "d")
		before := Assign(members, old, nil)
		// New connectors, as buses created between two full rounds add them, with one to four tasks each.
		var fresh []rpc.TaskID
		for c := range rng.IntN(4) + 1 {
			for i := range rng.IntN(4) + 1 {
				fresh = append(fresh, rpc.TaskID{Connector: fmt.Sprintf("new%d", c), Task: i})
			}
		}
		name := fmt.Sprintf("case %d (members %v, %d old tasks, %d new)", n, members, len(old), len(fresh))
		placed := Place(members, assignTestLoads(before), fresh)
		if len(members) > 0 && len(placed) != len(fresh) {
			t.Fatalf("%s: placed %d of %d", name, len(placed), len(fresh))
		}
		for task, w := range placed {
			if !slices.Contains(members, w) {
				t.Fatalf("%s: %v placed on %s, not a member", name, task, w)
			}
		}
		current := maps.Clone(before)
		maps.Copy(current, placed)
		all := append(slices.Clone(old), fresh...)
		if moved := Moves(current, Assign(members, all, current)); len(moved) > 0 {
			t.Fatalf("%s: the next assignment moves %v (placed %v)", name, moved, placed)
		}
		shuffled := slices.Clone(fresh)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		reversed := slices.Clone(members)
		slices.Reverse(reversed)
		if again := Place(reversed, assignTestLoads(before), shuffled); !reflect.DeepEqual(placed, again) {
			t.Fatalf("%s: not deterministic: %v vs %v", name, placed, again)
		}
	}
}
