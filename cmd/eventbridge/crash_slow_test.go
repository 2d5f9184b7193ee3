//go:build slow

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
)

// process is the eventbridge binary running as a child process.
type process struct {
	cmd  *exec.Cmd
	addr string
}

func startProcess(t *testing.T, bin, dataDir string) *process {
	t.Helper()
	addr := listenertest.Addr(t)
	cmd := exec.Command(bin, "--http-addr", addr, "--worker-addr", listenertest.Addr(t), "--data-dir", dataDir,
		"--allow-private-targets", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	p := &process{cmd: cmd, addr: addr}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	waitReady(t, addr, 60*time.Second)
	return p
}

// waitReady waits until the process listening on addr answers /readyz with 200.
func waitReady(t *testing.T, addr string, limit time.Duration) {
	t.Helper()
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, limit, 100*time.Millisecond, "eventbridge did not become ready")
}

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "eventbridge")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

// putLoop sends batches of 10 events until stop closes and returns the ids of every batch whose PutEvents call
// answered with every entry stored.
func putLoop(base, key string, stop <-chan struct{}) map[string]bool {
	acked := map[string]bool{}
	client := &http.Client{Timeout: 5 * time.Second}
	for n := 0; ; n++ {
		select {
		case <-stop:
			return acked
		default:
		}
		var batch []map[string]any
		for i := 0; i < 10; i++ {
			batch = append(batch, event(fmt.Sprintf("e-%d-%d", n, i), "load", "t", map[string]any{"n": n}))
		}
		body, _ := json.Marshal(batch)
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/buses/load/events", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/cloudevents-batch+json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			time.Sleep(20 * time.Millisecond) // the process is gone or restarting
			continue
		}
		var res struct {
			FailedEntryCount int `json:"failedEntryCount"`
			Entries          []struct {
				EventID string `json:"eventId"`
			} `json:"entries"`
		}
		err = json.NewDecoder(resp.Body).Decode(&res)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			continue
		}
		for _, e := range res.Entries {
			if e.EventID != "" {
				acked[e.EventID] = true
			}
		}
	}
}

// TestSlowCrashLosesNoAcknowledgedEvent kills the binary with SIGKILL (and, in a second round, stops it with
// SIGTERM) under a steady stream of PutEvents; after a restart on the same data directory every event whose call
// had answered is delivered.
func TestSlowCrashLosesNoAcknowledgedEvent(t *testing.T) {
	bin := buildBinary(t)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			r := newReceiver(t)
			p := startProcess(t, bin, dir)
			key, err := os.ReadFile(filepath.Join(dir, AdminAPIKeyFile))
			require.NoError(t, err)
			a := api{t: t, base: "http://" + p.addr, key: strings.TrimSpace(string(key))}
			a.must("POST", "/api/v1/buses", map[string]any{"name": "load"}, 201)
			a.must("POST", "/api/v1/buses/load/rules", map[string]any{"name": "all",
				"eventPattern": map[string]any{"source": []any{"load"}}}, 201)
			a.must("PUT", "/api/v1/buses/load/rules/all/targets/t", httpTarget(r.srv.URL), 201)

			stop := make(chan struct{})
			var acked map[string]bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() { defer wg.Done(); acked = putLoop(a.base, a.key, stop) }()
			time.Sleep(3 * time.Second)
			require.NoError(t, p.cmd.Process.Signal(sig))
			state, _ := p.cmd.Process.Wait()
			close(stop)
			wg.Wait()
			if sig == syscall.SIGTERM {
				require.True(t, state.Success(), "graceful shutdown exited with %v", state)
			}
			require.NotEmpty(t, acked)
			t.Logf("%d events acknowledged before %s", len(acked), sig)

			startProcess(t, bin, dir)
			require.Eventually(t, func() bool {
				got := r.snapshot()
				for id := range acked {
					if got[id] == 0 {
						return false
					}
				}
				return true
			}, 120*time.Second, 100*time.Millisecond, "acknowledged events lost after %s", sig)
		})
	}
}
