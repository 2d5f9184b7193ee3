package herder

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// KV buckets of the runtime state besides connector configs (Names.Bucket(purpose)).
const (
	// StatusBucketPurpose holds the status of every connector and task: key <connector>.connector for the
	// connector, <connector>.<task> for each task; values are rpc.ConnectorState and rpc.TaskState without counters.
	StatusBucketPurpose = "status"
	// TasksBucketPurpose holds the config of every task: key <connector>.<task>, value TaskConfig.
	TasksBucketPurpose = "tasks"
)

// A key is a connector name and one more token; connector names may contain dots, but the last token is never
// part of the name, so <connector>.* lists one connector's keys and no other's.
const connectorStatusToken = "connector"

func taskKey(connectorName string, task int) string {
	return connectorName + "." + strconv.Itoa(task)
}

// TaskConfig is the config of one task as stored in the tasks bucket: the connector's config (secret values as
// ciphertext) with the task's id, as Kafka Connect's task configs are.
type TaskConfig struct {
	ID     rpc.TaskID        `json:"id"`
	Config map[string]string `json:"config"`
}

// KeyTaskID is the key of a task's number in its stored config.
const KeyTaskID = "task.id"

// stateKV are the status and tasks buckets and what was last written to them, to write only changes.
type stateKV struct {
	status, tasks jetstream.KeyValue
	written       map[string]string // bucket/key -> value last written; guarded by the monitor goroutine
}

func ensureStateKV(ctx context.Context, js jetstream.JetStream, bucket func(string) string, replicas int) (*stateKV, error) {
	open := func(purpose, doc string) (jetstream.KeyValue, error) {
		return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: bucket(purpose), Description: doc, History: 1, Storage: jetstream.FileStorage, Replicas: replicas,
		})
	}
	status, err := open(StatusBucketPurpose, "status of connectors and tasks")
	if err != nil {
		return nil, err
	}
	tasks, err := open(TasksBucketPurpose, "task configs")
	if err != nil {
		return nil, err
	}
	return &stateKV{status: status, tasks: tasks, written: map[string]string{}}, nil
}

// syncState writes the status and task configs of every connector that changed since the last call, and
// removes the keys of connectors and tasks that are gone. Called from the monitor goroutine only.
func (h *Herder) syncState(ctx context.Context) {
	s := h.state
	if s == nil {
		return
	}
	want := map[string]string{} // bucket/key -> value
	h.mu.RLock()
	for name, c := range h.conns {
		st := h.statusLocked(c)
		want["s/"+name+"."+connectorStatusToken] = string(mustJSON(st.Connector))
		for _, t := range st.Tasks {
			t.Counters = nil
			want["s/"+taskKey(name, t.ID)] = string(mustJSON(t))
		}
		if c.state == rpc.StateRunning || c.state == rpc.StatePaused {
			for i := range c.nTasks {
				cfg := maps.Clone(c.rec.Config)
				cfg[KeyTaskID] = strconv.Itoa(i)
				want["t/"+taskKey(name, i)] = string(mustJSON(TaskConfig{ID: rpc.TaskID{Connector: name, Task: i}, Config: cfg}))
			}
		}
	}
	h.mu.RUnlock()
	bucket := func(k string) (jetstream.KeyValue, string) {
		if k[0] == 's' {
			return s.status, k[2:]
		}
		return s.tasks, k[2:]
	}
	for k, v := range want {
		if s.written[k] == v {
			continue
		}
		kv, key := bucket(k)
		if _, err := kv.Put(ctx, key, []byte(v)); err != nil {
			h.log.Warn("storing runtime state", "bucket", kv.Bucket(), "key", key, "err", err)
			continue
		}
		s.written[k] = v
	}
	for k := range s.written {
		if _, ok := want[k]; ok {
			continue
		}
		kv, key := bucket(k)
		if err := kv.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			h.log.Warn("removing runtime state", "bucket", kv.Bucket(), "key", key, "err", err)
			continue
		}
		delete(s.written, k)
	}
}

// StoredTaskConfigs returns the task configs stored for a connector, by task. For tests and operators.
func (h *Herder) StoredTaskConfigs(ctx context.Context, name string) (map[int]TaskConfig, error) {
	out := map[int]TaskConfig{}
	err := h.readState(ctx, h.state.tasks, name, func(token string, value []byte) error {
		var tc TaskConfig
		if err := json.Unmarshal(value, &tc); err != nil {
			return err
		}
		out[tc.ID.Task] = tc
		return nil
	})
	return out, err
}

// StoredStatus returns the status stored for a connector: the connector's state and each task's.
func (h *Herder) StoredStatus(ctx context.Context, name string) (rpc.ConnectorStatus, error) {
	out := rpc.ConnectorStatus{Name: name, Tasks: []rpc.TaskState{}}
	err := h.readState(ctx, h.state.status, name, func(token string, value []byte) error {
		if token == connectorStatusToken {
			return json.Unmarshal(value, &out.Connector)
		}
		var t rpc.TaskState
		if err := json.Unmarshal(value, &t); err != nil {
			return err
		}
		out.Tasks = append(out.Tasks, t)
		return nil
	})
	return out, err
}

func (h *Herder) readState(ctx context.Context, kv jetstream.KeyValue, name string, f func(token string, value []byte) error) error {
	lister, err := kv.ListKeysFiltered(ctx, name+".*")
	if err != nil {
		return err
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	_ = lister.Stop()
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if err := f(k[len(name)+1:], e.Value()); err != nil {
			return err
		}
	}
	return nil
}
