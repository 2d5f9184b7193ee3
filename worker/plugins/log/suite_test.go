package log_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/connector/connectortest"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	logsink "github.com/eventbridge-go/eventbridge/worker/plugins/log"
)

// cannotFail is why the suite does not stop the log sink's peer; TestWriteIgnoresAFailingLog holds the sink to it.
const cannotFail = "Write returns nil whatever its log does: log/slog's Logger drops its handler's errors, " +
	"so a log that cannot be written loses lines, it does not fail deliveries (the package's contract: it never fails)"

func TestSinkSuite(t *testing.T) {
	connectortest.RunSinkSuite(t, connectortest.SinkSuite{
		Plugin:     logsink.Plugin(),
		NewPeer:    newLogPeer,
		CannotFail: cannotFail,
	})
}

// A log whose writer fails does not fail the sink's Write: the reason the suite's CannotFail gives. When the sink
// starts to report such failures, this test fails, and the suite must stop the peer again.
func TestWriteIgnoresAFailingLog(t *testing.T) {
	t.Parallel()
	w := &failingWriter{}
	logger := slog.New(slog.NewJSONHandler(w, nil))
	s, err := logsink.New(logsink.Plugin().FullSpec().Values(map[string]string{}), connector.Env{Logger: logger})
	require.NoError(t, err)
	assert.NoError(t, s.Write(context.Background(), sample()))
	assert.Equal(t, 1, w.calls, "the sink wrote the line, and the log failed it")
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write([]byte) (int, error) {
	w.calls++
	return 0, errors.New("disk full")
}

// logPeer is the log of the suite's sinks: the writer of their logger (JSON lines, like the worker's). It accepts
// an event once its line is written; Hold blocks the writer, so the sink's Write waits inside the logger.
type logPeer struct {
	t *testing.T

	mu      sync.Mutex
	out     bytes.Buffer
	gate    chan struct{} // while not nil, writes wait for it to close
	waiting int
}

var (
	_ connectortest.Peer    = (*logPeer)(nil)
	_ connectortest.EnvPeer = (*logPeer)(nil)
)

func newLogPeer(t *testing.T, _ *jetstreamtest.Env) connectortest.Peer { return &logPeer{t: t} }

func (p *logPeer) Config() map[string]string {
	return map[string]string{logsink.KeyLevel: logsink.LevelInfo}
}

// Env gives the sinks a logger that writes to the peer, at the worker's default level (info).
func (p *logPeer) Env(env connector.Env) connector.Env {
	env.Logger = slog.New(slog.NewJSONHandler(p, nil)).With("connector", env.Connector)
	return env
}

// Write is the log's writer: it stores one line, once the gate of Hold, if any, is open.
func (p *logPeer) Write(b []byte) (int, error) {
	p.mu.Lock()
	gate := p.gate
	if gate != nil {
		p.waiting++
	}
	p.mu.Unlock()
	if gate != nil {
		<-gate
		p.mu.Lock()
		p.waiting--
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.Write(b)
}

// Accepted returns the ids of the event lines written, in order. It reports a line that is not an event's with
// Errorf: the suite calls Accepted from its polling goroutines.
func (p *logPeer) Accepted() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, line := range bytes.Split(p.out.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var rec struct {
			Msg string `json:"msg"`
			ID  string `json:"id"`
		}
		if err := json.Unmarshal(line, &rec); err != nil || rec.Msg != logsink.Message || rec.ID == "" {
			p.t.Errorf("peer: a log line that is not an event's: %q (%v)", line, err)
			continue
		}
		ids = append(ids, rec.ID)
	}
	return ids
}

// Hold blocks every write of the log until release, so the sink's Write does not return; release also runs when
// the test ends.
func (p *logPeer) Hold() (held func() int, release func()) {
	gate := make(chan struct{})
	p.mu.Lock()
	p.gate = gate
	p.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			p.mu.Lock()
			p.gate = nil
			p.mu.Unlock()
			close(gate)
		})
	}
	p.t.Cleanup(release) // before the suite stops its tasks, which wait for the held Writes
	return func() int {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.waiting
	}, release
}

// Stop is never called: the suite runs with CannotFail.
func (p *logPeer) Stop() {
	p.t.Fatal("peer: the log sink cannot fail, so the suite must not stop its peer")
}

// Start is never called: the suite runs with CannotFail.
func (p *logPeer) Start() {
	p.t.Fatal("peer: the log sink cannot fail, so the suite must not start its peer")
}
