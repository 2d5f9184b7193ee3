//go:build slow

package main

import (
	"context"
	"maps"
	"slices"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fault injection on a cluster of worker processes under a steady load: 3 workers share 8 tasks (a router and
// seven http targets, one task each); a worker is killed, stopped, all are restarted, a fourth joins. Every test
// checks that every event reaches every receiver whose rule matches it, and logs its figures as Markdown table
// rows ("figure | test | figure | value |"; set EB_SLOW_FIGURES=file to collect them).

// startThree starts w1, w2 and w3, creates the connectors and returns the owners of the tasks.
func startThree(t *testing.T) (*cluster, map[string]string) {
	c := newCluster(t)
	for _, id := range []string{"w1", "w2", "w3"} {
		c.start(id)
	}
	c.createConnectors(c.byID("w1"))
	owners := c.waitRunning(c.byID("w1"), nil)
	t.Logf("owners: %v", owners)
	return c, owners
}

// victimOf returns the worker owning the router's task.
func victimOf(c *cluster, owners map[string]string) *workerProc {
	return c.byID(owners[routerConnector])
}

func otherThan(c *cluster, id string) *workerProc {
	for _, w := range c.live() {
		if w.id != id {
			return w
		}
	}
	return nil
}

// allDeliveries merges the deliveries of every receiver.
func (c *cluster) allDeliveries() []delivery {
	var out []delivery
	for _, r := range c.receivers {
		out = append(out, r.deliveries()...)
	}
	return out
}

func TestSlowClusterKillOneWorker(t *testing.T) {
	c, before := startThree(t)
	victim := victimOf(c, before)
	moved := tasksOf(before, victim.id)
	t.Logf("killing %s, which runs %v", victim.id, moved)

	l := c.startLoad()
	time.Sleep(3 * time.Second)
	storedBefore := l.published() // events 0..storedBefore-1 were acknowledged by JetStream before the kill
	killed := time.Now()
	victim.signal(t, syscall.SIGKILL)
	_ = victim.wait(t, 10*time.Second)
	dead := time.Now()
	routed := c.lastRouted() // nothing is routed while no worker runs the router
	time.Sleep(5 * time.Second)
	n := l.halt()
	t.Logf("%d events published; %d were routed before the kill", n, routed+1)

	survivor := otherThan(c, victim.id)
	after := c.waitRunning(survivor, []string{victim.id})
	for name, owner := range before {
		if owner != victim.id {
			assert.Equal(t, owner, after[name], "%s was on a live worker and keeps it", name)
		}
	}
	t.Logf("owners after the kill: %v", after)

	dups := c.verifyDelivered(n)
	total := 0
	for _, r := range clusterRules {
		total += dups[r.id]
	}
	figure(t, "events published", n)
	figure(t, "duplicates after SIGKILL (all receivers)", total)
	figure(t, "duplicates per receiver", dups)
	var complete time.Time
	for _, r := range clusterRules {
		if at := c.receivers[r.id].completedAt(expectedFor(r.id, n)); at.After(complete) {
			complete = at
		}
	}
	// Records a killed task held unacknowledged come back after their consumer's AckWait (2 s), before the
	// killed worker's lease lapses (2.5 s after its last renewal): its tasks' next owners find them waiting.
	figure(t, "SIGKILL → every event delivered", ms(complete.Sub(killed)))
	figure(t, "load stopped → every event delivered", ms(complete.Sub(l.stopped)))
	var ackedDone time.Time
	for _, r := range clusterRules {
		if at := c.receivers[r.id].completedAt(expectedFor(r.id, storedBefore)); at.After(ackedDone) {
			ackedDone = at
		}
	}
	figure(t, "SIGKILL → every event acknowledged before it delivered", ms(ackedDone.Sub(killed)))
	var gapWorst time.Duration
	for _, r := range clusterRules {
		gap := longestGap(c.receivers[r.id].deliveries(), killed.Add(-time.Second), dead.Add(5*time.Second))
		gapWorst = max(gapWorst, gap)
	}
	figure(t, "longest gap in deliveries at any receiver", ms(gapWorst))
	assert.Less(t, ackedDone.Sub(killed), 6*time.Second, "events acknowledged before the kill wait for an ack wait")

	var worst time.Duration
	for _, name := range moved {
		var d delivery
		var ok bool
		if name == routerConnector {
			// The first event routed by the router's next owner (targets may still drain what was routed before).
			d, ok = firstAfter(c.allDeliveries(), dead, routed)
		} else {
			d, ok = firstAfter(c.receivers[ruleOf(name)].deliveries(), dead, -1)
		}
		require.True(t, ok, "no delivery of %s after the kill", name)
		failover := d.at.Sub(killed)
		worst = max(worst, failover)
		figure(t, "SIGKILL → first delivery, "+name, ms(failover))
	}
	// Leases lapse 2.5 s after their last renewal; a takeover much later than that is a defect.
	assert.Less(t, worst, 10*time.Second, "failover of the killed worker's tasks")
}

func TestSlowClusterSigtermHandsOver(t *testing.T) {
	c, before := startThree(t)
	victim := victimOf(c, before)
	moved := tasksOf(before, victim.id)
	t.Logf("stopping %s, which runs %v", victim.id, moved)

	l := c.startLoad()
	time.Sleep(3 * time.Second)
	stopped := time.Now()
	victim.signal(t, syscall.SIGTERM)
	require.NoError(t, victim.wait(t, 30*time.Second), "exit status after SIGTERM")
	exitedAfter := time.Since(stopped)
	time.Sleep(time.Until(stopped.Add(5 * time.Second)))
	n := l.halt()

	survivor := otherThan(c, victim.id)
	after := c.waitRunning(survivor, []string{victim.id})
	for name, owner := range before {
		if owner != victim.id {
			assert.Equal(t, owner, after[name], "%s was on a live worker and keeps it", name)
		}
	}
	dups := c.verifyDelivered(n)
	figure(t, "events published", n)
	figure(t, "SIGTERM → exit", ms(exitedAfter))
	from, to := stopped.Add(-time.Second), l.stopped
	var worst time.Duration
	for _, name := range moved {
		var gap time.Duration
		if name == routerConnector {
			gap = longestGap(c.allDeliveries(), from, to)
		} else {
			gap = longestGap(c.receivers[ruleOf(name)].deliveries(), from, to)
		}
		worst = max(worst, gap)
		figure(t, "longest gap in deliveries, "+name, ms(gap))
	}
	figure(t, "longest gap at the moved tasks' receivers", ms(worst))
	for _, r := range clusterRules {
		assert.Zero(t, dups[r.id], "duplicates at %s after a clean handover", r.id)
	}
	// Released leases are taken at once (about 100 ms); a gap near the lease TTL (2.5 s) means a lease was not
	// deleted on release and had to lapse.
	assert.Less(t, worst, 2*time.Second, "a handover on SIGTERM does not wait for leases to lapse")
}

func TestSlowClusterRestartAll(t *testing.T) {
	c, _ := startThree(t)
	l := c.startLoad()
	time.Sleep(2 * time.Second)

	down := time.Now()
	var wg sync.WaitGroup
	for _, w := range c.live() {
		w.signal(t, syscall.SIGTERM)
		wg.Go(func() { assert.NoError(t, w.wait(t, 30*time.Second), "exit status of %s after SIGTERM", w.id) })
	}
	wg.Wait()
	allDown := time.Now()
	atDown := l.published()
	time.Sleep(2 * time.Second) // the load goes on into NATS
	restart := time.Now()
	for _, id := range []string{"w1", "w2", "w3"} {
		c.start(id)
	}
	c.waitRunning(c.byID("w1"), nil)
	time.Sleep(3 * time.Second)
	n := l.halt()
	require.Greater(t, n, atDown, "events published while every worker was down")

	d, ok := firstAfter(c.allDeliveries(), allDown, atDown)
	require.True(t, ok, "no delivery after the restart")
	dups := c.verifyDelivered(n)
	total := 0
	for _, r := range clusterRules {
		total += dups[r.id]
	}
	figure(t, "events published", n)
	figure(t, "SIGTERM ×3 → all exited", ms(allDown.Sub(down)))
	figure(t, "restart begun → first delivery of an event published while down", ms(d.at.Sub(restart)))
	figure(t, "duplicates after stop-all and restart", total)
	assert.Zero(t, total, "duplicates after clean stops")
}

func TestSlowClusterAddFourthWorker(t *testing.T) {
	c, before := startThree(t)
	counts := map[string]int{}
	for _, o := range before {
		counts[o]++
	}
	require.ElementsMatch(t, []int{3, 3, 2}, slices.Collect(maps.Values(counts)), "8 tasks on 3 workers: %v", before)
	need := 0
	for _, k := range counts {
		need += max(0, k-2)
	}

	l := c.startLoad()
	time.Sleep(2 * time.Second)

	// Poll the owners every 50 ms through w1 while the fourth worker joins.
	type snapshot struct {
		at      time.Time
		owners  map[string]string
		members []string // the live workers as the observer last read them
	}
	var (
		mu    sync.Mutex
		snaps []snapshot
		stop  = make(chan struct{})
		done  = make(chan struct{})
	)
	observer := c.byID("w1")
	go func() {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			o, err := c.owners(observer)
			if err != nil {
				continue
			}
			var members []string
			if info, err := observer.client().ClusterInfo(context.Background()); err == nil {
				for _, w := range info.Workers {
					members = append(members, w.WorkerID)
				}
			}
			mu.Lock()
			snaps = append(snaps, snapshot{time.Now(), o, members})
			mu.Unlock()
		}
	}()

	joined := time.Now()
	c.start("w4")
	var after map[string]string
	require.Eventually(t, func() bool {
		tasks := map[string]int{}
		for _, w := range c.live() {
			at, err := w.client().AllocatedTasks(context.Background())
			if err != nil {
				return false
			}
			tasks[w.id] = len(at)
		}
		o, err := c.owners(observer)
		if err != nil {
			return false
		}
		after = o
		per := map[string]int{}
		for _, owner := range o {
			per[owner]++
		}
		for _, id := range []string{"w1", "w2", "w3", "w4"} {
			if tasks[id] != 2 || per[id] != 2 {
				return false
			}
		}
		return true
	}, waitLong, 50*time.Millisecond, "balanced at 2 tasks per worker; last owners %v", &after)
	balanced := time.Since(joined)
	time.Sleep(time.Second)
	close(stop)
	<-done
	n := l.halt()

	var movedTasks []string
	for name, owner := range before {
		if after[name] != owner {
			movedTasks = append(movedTasks, name)
			assert.Equal(t, "w4", after[name], "%s moved from %s to the new worker", name, owner)
		}
	}
	sort.Strings(movedTasks)
	assert.Len(t, movedTasks, need, "moves needed to balance %v: %v", counts, movedTasks)

	// Tasks that stay never show another owner; moved ones go from their owner to w4, maybe UNASSIGNED between.
	// The poller has exited: snaps is ours.
	require.NotEmpty(t, snaps)
	handover := map[string]time.Duration{}
	for name, owner := range before {
		stays := !slices.Contains(movedTasks, name)
		var gapFrom time.Time
		for _, s := range snaps {
			got := s.owners[name]
			switch {
			case stays:
				assert.Equal(t, owner, got, "%s stays on %s; at %s it showed %q (%s's live workers then: %v)",
					name, owner, s.at.Format("15:04:05.000"), got, observer.id, s.members)
			case got == owner || got == "w4":
				if !gapFrom.IsZero() {
					handover[name] = max(handover[name], s.at.Sub(gapFrom))
					gapFrom = time.Time{}
				}
			default:
				if gapFrom.IsZero() {
					gapFrom = s.at
				}
				assert.Contains(t, []string{"UNASSIGNED"}, got, "%s moves from %s to w4", name, owner)
			}
		}
	}
	dups := c.verifyDelivered(n)

	figure(t, "events published", n)
	figure(t, "tasks before (w1,w2,w3)", counts)
	figure(t, "moved tasks", movedTasks)
	figure(t, "fourth worker started → balanced (statuses and /allocated/tasks)", ms(balanced))
	for _, name := range movedTasks {
		figure(t, "time shown UNASSIGNED while moving, "+name, ms(handover[name]))
		var gap time.Duration
		if name == routerConnector {
			gap = longestGap(c.allDeliveries(), joined, l.stopped)
		} else {
			gap = longestGap(c.receivers[ruleOf(name)].deliveries(), joined, l.stopped)
		}
		figure(t, "longest gap in deliveries, "+name, ms(gap))
	}
	// Whatever the statuses showed, a task that stays must not stop delivering.
	var stayGap time.Duration
	for name := range before {
		if name == routerConnector || slices.Contains(movedTasks, name) {
			continue
		}
		stayGap = max(stayGap, longestGap(c.receivers[ruleOf(name)].deliveries(), joined, l.stopped))
	}
	figure(t, "longest gap in deliveries at the receivers of tasks that stay", ms(stayGap))
	assert.Less(t, stayGap, time.Second, "tasks that stay keep delivering")
	for _, r := range clusterRules {
		assert.Zero(t, dups[r.id], "duplicates at %s after a rebalance", r.id)
	}
}
