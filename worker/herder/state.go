package herder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// KV buckets of the runtime state besides connector configs (Names.Bucket(purpose)).
const (
	// StatusBucketPurpose holds the status of connectors and tasks: key <connector>.connector for a connector
	// whose config could not be applied, <connector>.<task> for each task, written by the task's owner
	// compare-and-set on the key's last revision, so a worker that lost a task cannot overwrite its successor's.
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

// StoredTask is the status of a task as its owner stores it.
type StoredTask struct {
	rpc.TaskState
	// Rev is the revision of the connector's record the task runs; Gen the restart request it last honoured.
	Rev uint64 `json:"rev"`
	Gen uint64 `json:"gen"`
}

// storedConnector is the status of a connector whose config could not be applied at revision Rev.
type storedConnector struct {
	rpc.ConnectorState
	Rev uint64 `json:"rev"`
}

// connectorState is what the status bucket holds for one connector.
type connectorState struct {
	connector *storedConnector
	tasks     map[int]StoredTask
}

type stateKV struct {
	status, tasks jetstream.KeyValue

	// statuses follows every write of the status bucket (readAll answers from it): a listing read to its end can
	// miss keys written meanwhile, a watcher that keeps following receives every write. A value is parsed when it
	// is first read and kept parsed until the next write of its key: the metrics history reads every status every
	// 10 s, while busy tasks write theirs every second.
	watcher  jetstream.KeyWatcher
	mu       sync.Mutex
	statuses map[string]keptStatus
	// changes counts the writes the watcher delivered.
	changes uint64
}

// follow keeps statuses current until the watcher stops.
func (s *stateKV) follow() {
	for e := range s.watcher.Updates() {
		if e == nil {
			continue
		}
		s.mu.Lock()
		if e.Operation() == jetstream.KeyValuePut {
			s.statuses[e.Key()] = keptStatus{value: e.Value()}
		} else {
			delete(s.statuses, e.Key())
		}
		s.changes++
		s.mu.Unlock()
	}
}

// changeCount counts the writes of the status bucket seen so far: readAll answers the same while it is unchanged.
func (s *stateKV) changeCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changes
}

// close stops following the status bucket.
func (s *stateKV) close() {
	if s.watcher != nil {
		_ = s.watcher.Stop()
	}
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
	w, err := status.WatchAll(context.WithoutCancel(ctx))
	if err != nil {
		return nil, err
	}
	st := &stateKV{status: status, tasks: tasks, watcher: w, statuses: map[string]keptStatus{}}
	go st.follow()
	return st, nil
}

// keptStatus is the last value of a key of the status bucket, and once read, what it parses to.
type keptStatus struct {
	value  []byte
	parsed bool
	entry  statusEntry
	ok     bool
}

// statusEntry is one key of the status bucket, parsed: a connector's status or one of its tasks' (neither when its
// value could not be read: written by a version that did not know it).
type statusEntry struct {
	name      string
	connector *storedConnector
	task      int
	stored    *StoredTask
}

// parseStatus parses one key of the status bucket and its value; false for a key that names no connector.
func parseStatus(key string, value []byte) (statusEntry, bool) {
	i := strings.LastIndexByte(key, '.')
	if i <= 0 {
		return statusEntry{}, false
	}
	e := statusEntry{name: key[:i]}
	token := key[i+1:]
	if token == connectorStatusToken {
		var c storedConnector
		if json.Unmarshal(value, &c) == nil {
			e.connector = &c
		}
	} else if n, err := strconv.Atoi(token); err == nil {
		var t StoredTask
		if json.Unmarshal(value, &t) == nil {
			e.task, e.stored = n, &t
		}
	}
	return e, true
}

// addTo adds the entry to the states by connector in out. What it points to is shared, not copied: readers do not
// change it.
func (e statusEntry) addTo(out map[string]connectorState) {
	cs := out[e.name]
	if cs.tasks == nil {
		cs.tasks = map[int]StoredTask{}
	}
	if e.connector != nil {
		cs.connector = e.connector
	}
	if e.stored != nil {
		cs.tasks[e.task] = *e.stored
	}
	out[e.name] = cs
}

// read returns the stored status of one connector of n tasks, key by key (a listing can miss keys written
// meanwhile).
func (s *stateKV) read(ctx context.Context, name string, n int) (connectorState, error) {
	out := map[string]connectorState{}
	keys := []string{name + "." + connectorStatusToken}
	for i := range n {
		keys = append(keys, taskKey(name, i))
	}
	for _, k := range keys {
		e, err := s.status.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return out[name], fmt.Errorf("reading status %s: %w", k, err)
		}
		if se, ok := parseStatus(k, e.Value()); ok {
			se.addTo(out)
		}
	}
	return out[name], nil
}

// readAll returns the stored status of every connector whose name starts with prefix ("": all), as the status
// bucket's watcher last saw it.
func (s *stateKV) readAll(ctx context.Context, prefix string) (map[string]connectorState, error) {
	out := map[string]connectorState{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, ks := range s.statuses {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if !ks.parsed {
			ks.entry, ks.ok = parseStatus(k, ks.value)
			ks.parsed, ks.value = true, nil
			s.statuses[k] = ks
		}
		if ks.ok {
			ks.entry.addTo(out)
		}
	}
	return out, ctx.Err()
}

// writeTask stores a task's status compare-and-set on rev, the key's revision as this owner last saw it (0: read
// it first), and returns the new revision. An error means another owner wrote since: the caller lost the task.
func (s *stateKV) writeTask(ctx context.Context, name string, st StoredTask, rev uint64) (uint64, error) {
	key := taskKey(name, st.ID)
	if rev == 0 {
		e, err := s.status.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			return s.status.Create(ctx, key, mustJSON(st))
		case err != nil:
			return 0, err
		}
		rev = e.Revision()
	}
	return s.status.Update(ctx, key, mustJSON(st), rev)
}

// readTask reads a task's stored status and its revision (0 when it has none).
func (s *stateKV) readTask(ctx context.Context, name string, task int) (StoredTask, uint64, error) {
	e, err := s.status.Get(ctx, taskKey(name, task))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return StoredTask{}, 0, nil
	case err != nil:
		return StoredTask{}, 0, err
	}
	var st StoredTask
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		// Unreadable: written by a version that did not know it; its totals start again.
		return StoredTask{}, e.Revision(), nil
	}
	return st, e.Revision(), nil
}

// writeConnector stores (FAILED) or clears the connector-level status of a connector at revision rev.
func (s *stateKV) writeConnector(ctx context.Context, name string, st rpc.ConnectorState, rev uint64) error {
	key := name + "." + connectorStatusToken
	if st.State != rpc.StateFailed {
		if err := s.status.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
		return nil
	}
	_, err := s.status.Put(ctx, key, mustJSON(storedConnector{ConnectorState: st, Rev: rev}))
	return err
}

// writeTaskConfigs stores the task configs of a connector of n tasks and removes those of tasks beyond n.
func (s *stateKV) writeTaskConfigs(ctx context.Context, name string, cfg map[string]string, n int) error {
	for i := range n {
		c := maps.Clone(cfg)
		c[KeyTaskID] = strconv.Itoa(i)
		if _, err := s.tasks.Put(ctx, taskKey(name, i), mustJSON(TaskConfig{ID: rpc.TaskID{Connector: name, Task: i}, Config: c})); err != nil {
			return fmt.Errorf("storing task configs of %s: %w", name, err)
		}
	}
	return s.purge(ctx, s.tasks, name, func(token string) bool {
		i, err := strconv.Atoi(token)
		return err == nil && i >= n
	})
}

// forget removes every status and task config of a connector.
func (s *stateKV) forget(ctx context.Context, name string) error {
	all := func(string) bool { return true }
	if err := s.purge(ctx, s.tasks, name, all); err != nil {
		return err
	}
	return s.purge(ctx, s.status, name, all)
}

// purge removes the keys <name>.<token> of kv whose token drop accepts.
func (s *stateKV) purge(ctx context.Context, kv jetstream.KeyValue, name string, drop func(token string) bool) error {
	keys, err := keysOf(ctx, kv, name)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !drop(k[len(name)+1:]) {
			continue
		}
		if err := kv.Purge(ctx, k); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
	}
	return nil
}

// keysOf lists the keys <name>.<token> of kv: one connector's.
func keysOf(ctx context.Context, kv jetstream.KeyValue, name string) ([]string, error) {
	lister, err := kv.ListKeysFiltered(ctx, name+".*")
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	_ = lister.Stop() // the listing has ended: its watcher may be stopped already
	return keys, nil
}

// StoredTaskConfigs returns the task configs stored for a connector, by task. For tests and operators.
func (h *Herder) StoredTaskConfigs(ctx context.Context, name string) (map[int]TaskConfig, error) {
	out := map[int]TaskConfig{}
	keys, err := keysOf(ctx, h.state.tasks, name)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		e, err := h.state.tasks.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var tc TaskConfig
		if err := json.Unmarshal(e.Value(), &tc); err != nil {
			return nil, err
		}
		out[tc.ID.Task] = tc
	}
	return out, nil
}
