package metrics

import (
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/scrape"
)

// States are the states a connector or task gauge reports, each as a series that is 1 for the current state and 0
// otherwise; a state outside the list is reported as well when it is the current one.
func States() []string {
	return []string{rpc.StateUnassigned, rpc.StateRunning, rpc.StatePaused, rpc.StateStopped, rpc.StateFailed,
		rpc.StateRestarting}
}

// counter is one eventbridge_worker_task_records_<name>_total series of a task.
type counter struct {
	family *scrape.Family
	value  func(*rpc.TaskCounters) uint64
}

// The labels that identify a connector and a task in the series.
var (
	connectorID = scrape.NewNames("connector")
	taskID      = scrape.NewNames("connector", "task")
)

// collector reads a Source at scrape time.
type collector struct {
	src            Source
	counters       []counter
	taskState      *scrape.Family
	connectorState *scrape.Family
	states         []string
}

func newCollector(src Source) *collector {
	c := func(name, help string, value func(*rpc.TaskCounters) uint64) counter {
		return counter{
			family: scrape.NewFamily(prometheus.BuildFQName(Namespace, Subsystem, "task_records_"+name+"_total"), help,
				prometheus.CounterValue, taskID, ""),
			value: value,
		}
	}
	return &collector{
		src: src,
		counters: []counter{
			c("read", "Records the task received since it started.",
				func(n *rpc.TaskCounters) uint64 { return n.Read }),
			c("written", "Records the sink accepted, then acked, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Written }),
			c("retried", "Delivery attempts handed back for another attempt since the task started (a record retried twice counts two).",
				func(n *rpc.TaskCounters) uint64 { return n.Retried }),
			c("dropped", "Records given up and acked without delivery or dead letter (errors.tolerance=all, no dead-letter topic) since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Dropped }),
			c("dead_lettered", "Records given up, stored on the dead-letter subject, then acked, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.DeadLettered }),
			c("failed", "Records given up and left in the stream, failing the task (errors.tolerance=none), since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Failed }),
			c("undecodable", "Records that were not CloudEvents, terminated, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Undecodable }),
			c("filtered", "Records a transform removed, acked without being written, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Filtered }),
			c("transform_failed", "Records a transform refused (each also counted dead-lettered, dropped or failed) since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.TransformFailed }),
			c("matched", "Records a routing sink wrote that matched at least one rule, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Matched }),
			c("unmatched", "Records a routing sink wrote that matched no rule, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Unmatched }),
			c("routed", "Copies a routing sink stored, one per rule a record matched, since the task started.",
				func(n *rpc.TaskCounters) uint64 { return n.Routed }),
		},
		taskState: scrape.NewFamily(prometheus.BuildFQName(Namespace, Subsystem, "task_state"),
			"State of a task: 1 for its current state, 0 for the others.", prometheus.GaugeValue, taskID, "state", States()...),
		connectorState: scrape.NewFamily(prometheus.BuildFQName(Namespace, Subsystem, "connector_state"),
			"State of a connector: 1 for its current state, 0 for the others.", prometheus.GaugeValue, connectorID, "state",
			States()...),
		states: States(),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, n := range c.counters {
		ch <- n.family.Desc()
	}
	ch <- c.taskState.Desc()
	ch <- c.connectorState.Desc()
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range c.src.Connectors() {
		st, err := c.src.Status(name)
		if err != nil {
			continue // deleted since Connectors
		}
		c.emitStates(ch, c.connectorState, connectorID.With(name), st.Connector.State)
		for _, t := range st.Tasks {
			l := taskID.With(name, strconv.Itoa(t.ID))
			c.emitStates(ch, c.taskState, l, t.State)
			if t.Counters == nil {
				continue
			}
			for _, n := range c.counters {
				ch <- n.family.Metric(l, "", float64(n.value(t.Counters)))
			}
		}
	}
}

// emitStates sends one series per state of f for the subject l: 1 for current, 0 for the others.
func (c *collector) emitStates(ch chan<- prometheus.Metric, f *scrape.Family, l scrape.Labels, current string) {
	states := c.states
	if current != "" && !slices.Contains(states, current) {
		states = append(slices.Clip(states), current)
	}
	for _, s := range states {
		v := 0.0
		if s == current {
			v = 1
		}
		ch <- f.Metric(l, s, v)
	}
}
