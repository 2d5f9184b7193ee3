//go:build slow

package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/listener/listenertest"
)

// TestSlowRecoversFromFileDescriptorExhaustion is the scenario in a child process whose soft and hard
// RLIMIT_NOFILE are 400 (prlimit; Go raises the soft limit to the hard one, so both are lowered) and whose
// connection cap is lifted: a flood of idle connections takes every file descriptor, the embedded NATS server fails
// to open its files, and its file store refuses writes from then on. Once the connections are released, the process
// heals by itself (the embedded NATS server is restarted in place) and PutEvents succeeds again without a restart;
// /readyz says 503 for as long as PutEvents cannot be stored.
func TestSlowRecoversFromFileDescriptorExhaustion(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	require.NoError(t, err, "prlimit (util-linux) lowers the child's file-descriptor limit")
	bin := buildBinary(t)
	dir := t.TempDir()
	addr := listenertest.Addr(t)
	var logs syncBuffer
	cmd := exec.Command(prlimit, "--nofile=400:400", bin, "--http-addr", addr, "--worker-addr", listenertest.Addr(t),
		"--data-dir", dir, "--http-max-connections", "0", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	defer func() {
		if t.Failed() {
			t.Logf("the child's log:\n%s", logs.String())
		}
	}()
	base := "http://" + addr
	client := &http.Client{Timeout: 15 * time.Second}
	ready := func() int {
		resp, err := client.Get(base + "/readyz")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Eventually(t, func() bool { return ready() == http.StatusOK }, 60*time.Second, 100*time.Millisecond)
	key, err := os.ReadFile(filepath.Join(dir, "admin-api-key"))
	require.NoError(t, err)
	do := func(method, path, ct, body string) int {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(key)))
		req.Header.Set("Content-Type", ct)
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	put := func(id string) int {
		return do("POST", "/api/v1/buses/b/events", "application/cloudevents+json",
			fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"/fd","type":"t"}`, id))
	}
	require.Equal(t, http.StatusCreated, do("POST", "/api/v1/buses", "application/json", `{"name":"b"}`))
	require.Equal(t, http.StatusOK, put("before"))

	// The flood: idle connections until the child can accept no more, held while the store tries to write.
	var conns []net.Conn
	for range 1000 {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	t.Logf("%d connections opened", len(conns))
	time.Sleep(5 * time.Second)
	for _, c := range conns {
		_ = c.Close()
	}

	// Released: PutEvents succeeds again within a minute, and /readyz agrees with it all along.
	var failed, notReady int
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; ; i++ {
		status := put(fmt.Sprintf("after-%d", i))
		r := ready()
		if status == http.StatusOK && r == http.StatusOK {
			break
		}
		if status != http.StatusOK {
			failed++
		}
		if r != http.StatusOK {
			notReady++
		}
		require.Truef(t, time.Now().Before(deadline), "PutEvents answers %d and /readyz %d 90 s after the flood ended", status, r)
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("after the flood: %d PutEvents failed, /readyz said not ready %d times", failed, notReady)
	if failed > 0 {
		require.Positive(t, notReady, "PutEvents failed while /readyz said ready")
	}
	require.True(t, bytes.Contains([]byte(logs.String()), []byte("restarting the embedded NATS server")) || failed == 0,
		"the store failed and came back without the heal")
}
