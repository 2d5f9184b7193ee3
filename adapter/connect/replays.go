package connect

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/replay"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// Replays lists the replays of a bus that run (or are to run) as connectors of the bus.
type Replays interface {
	ListActiveByBus(ctx context.Context, busID string) ([]*replay.Replay, error)
}

// ReplayName is the connector of a replay: eb.<account>.<bus>.=replay.<replay>. No rule is named =replay (rule
// names are [A-Za-z0-9_-]), so it collides with no target's connector.
func ReplayName(accountID, busName, replayName string) string {
	return busPrefix(accountID, busName) + "=replay." + namePart(replayName)
}

// Keys of the replay plugin (worker/plugins/replay).
const (
	keyReplayName          = "replay.name"
	keyReplayArchiveStream = "replay.archive.stream"
	keyReplayArchiveSubj   = "replay.archive.subject"
	keyReplayStart         = "replay.start"
	keyReplayEnd           = "replay.end"
	keyReplayEndSequence   = "replay.end.sequence"
	keyReplayRules         = "replay.rules"
	keyReplayTarget        = "replay.target"
	keyReplayRate          = "replay.rate"
)

// desiredReplays returns the connectors of the bus's replays that are STARTING or RUNNING: a source connector of
// the replay plugin reading the archive's stream and storing on the bus's intake. Nil Config.Replays declares none.
func (a *Adapter) desiredReplays(ctx context.Context, b *bus.Bus) (map[string]Desired, error) {
	out := map[string]Desired{}
	if a.cfg.Replays == nil {
		return out, nil
	}
	rs, err := a.cfg.Replays.ListActiveByBus(ctx, b.ID())
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		cfg := map[string]string{
			rpc.ConfigConnectorClass: "replay",
			rpc.ConfigTasksMax:       "1",
			keyOutputSubject:         a.cfg.Physical.BusIn(b.ID()),
			keyOutputStream:          a.cfg.Physical.BusStream(b.ID()),
			keyReplayName:            r.Name,
			keyReplayArchiveStream:   a.cfg.Physical.ArchiveStream(r.AccountID, r.ArchiveID),
			keyReplayArchiveSubj:     a.cfg.Physical.ArchiveSubject(r.AccountID, r.ArchiveID),
			keyReplayStart:           r.EventStartTime.UTC().Format(time.RFC3339Nano),
			keyReplayEnd:             r.EventEndTime.UTC().Format(time.RFC3339Nano),
			keyReplayEndSequence:     strconv.FormatUint(r.EndSequence, 10),
			keyReplayRate:            strconv.Itoa(r.Rate),
			// A replayed event the store refuses now goes to the account's dead letters with its reason.
			"errors.tolerance":                  "all",
			"errors.deadletterqueue.topic.name": a.cfg.Physical.DLQSubject(b.AccountID()),
		}
		if d := r.Destination; d.TargetID != "" {
			cfg[keyReplayTarget] = d.TargetRuleID + "." + d.TargetID
		} else if len(d.RuleIDs) > 0 {
			cfg[keyReplayRules] = strings.Join(d.RuleIDs, ",")
		}
		out[ReplayName(b.AccountID(), b.Name(), r.Name)] = Desired{Config: cfg}
	}
	return out, nil
}

// replayOffset is the offset the replay plugin stores for its archive's partition.
type replayOffset struct {
	Sequence     uint64 `json:"sequence"`
	Replayed     uint64 `json:"replayed"`
	LastStoredAt string `json:"lastStoredAt"`
	Done         bool   `json:"done"`
}

// ReplayReport reads a replay's connector: whether it exists and runs, its task's failure, and its offset
// (progress, and whether it replayed the whole window), with the duplicates its task counted.
func (a *Adapter) ReplayReport(ctx context.Context, r *replay.Replay) (replay.Report, error) {
	b, err := a.cfg.Buses.GetByID(ctx, r.BusID)
	if err != nil {
		return replay.Report{}, err
	}
	name := ReplayName(r.AccountID, b.Name(), r.Name)
	status, err := a.cfg.Runtime.ConnectorStatus(ctx, name)
	if rpc.IsNotFound(err) {
		return replay.Report{}, nil
	}
	if err != nil {
		return replay.Report{}, err
	}
	rep := replay.Report{Found: true}
	for _, t := range status.Tasks {
		switch t.State {
		case rpc.StateRunning:
			rep.Running = true
		case rpc.StateFailed:
			rep.Failed = firstLine(t.Trace)
			if rep.Failed == "" {
				rep.Failed = "the replay's task failed"
			}
		}
		if t.Counters != nil {
			rep.Progress.Duplicates += t.Counters.Duplicates
		}
	}
	offsets, err := a.cfg.Runtime.GetOffsets(ctx, name)
	if err != nil && !rpc.IsNotFound(err) {
		return rep, fmt.Errorf("reading the offsets of %s: %w", name, err)
	}
	if offsets != nil {
		for _, o := range offsets.Offsets {
			raw, err := json.Marshal(o.Offset)
			if err != nil {
				continue
			}
			var off replayOffset
			if json.Unmarshal(raw, &off) != nil {
				continue
			}
			rep.Done = off.Done
			rep.Progress.Replayed = off.Replayed
			if t, err := time.Parse(time.RFC3339Nano, off.LastStoredAt); err == nil {
				rep.Progress.LastReplayedTime = t
			}
		}
	}
	return rep, nil
}

// firstLine is the first line of a task's trace: its error.
func firstLine(trace string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(trace), "\n")
	return line
}
