//go:build slow

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSlowTwoThousandBuses: with every default but the budget, scaled down from 50 GB free to 50 MiB (what the
// real defaults are for, docs/storage.md), 2,000 buses of the default retention are created in 20 accounts of 100
// buses (the default bus quota), each with its router; events are put on some of them and routed; a bus with a size
// of its own that does not fit the budget is refused with StorageBudgetExceeded while the others keep working.
func TestSlowTwoThousandBuses(t *testing.T) {
	dir := t.TempDir()
	// The test waits for the embedded NATS server to stop (thousands of consumers) before removing its directory.
	m := startMain(t, dir, "--storage-budget-mib", "50", "--nats-stop-timeout", "5m", "--account-storage-quota-mib", "10", "--dead-letter-max-mib", "1", "--bus-log-max-mib", "1",
		"--storage-check-interval", "500ms")
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m)
	const accounts, perAccount = 20, 100
	clients := make([]api, accounts)
	for i := range clients {
		clients[i] = a.newAccount(fmt.Sprintf("acct%02d", i))
	}
	start := time.Now()
	var created atomic.Int64
	var wg sync.WaitGroup
	four := make(chan struct{}, 4) // four accounts create at once
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			four <- struct{}{}
			defer func() { <-four }()
			for j := range perAccount {
				c.must("POST", "/api/v1/buses", map[string]any{"name": fmt.Sprintf("bus%03d", j)}, 201)
				created.Add(1)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	require.EqualValues(t, accounts*perAccount, created.Load())
	t.Logf("%d buses created in %s (%.1f/s)", accounts*perAccount, took.Round(time.Millisecond), float64(accounts*perAccount)/took.Seconds())
	var n int64
	require.NoError(t, filepath.Walk(filepath.Join(dir, "nats"), func(_ string, info os.FileInfo, err error) error {
		if errors.Is(err, fs.ErrNotExist) { // a state file the running server renamed meanwhile
			return nil
		}
		if err == nil && !info.IsDir() {
			n += info.Size()
		}
		return err
	}))
	t.Logf("the event store holds %d KiB on disk with 2,000 empty buses", n>>10)

	// Events are routed on buses of several accounts.
	for _, c := range []api{clients[0], clients[accounts/2], clients[accounts-1]} {
		r := newReceiver(t)
		c.must("POST", "/api/v1/buses/bus099/rules", map[string]any{"name": "all", "eventPattern": map[string]any{"source": []any{"shop"}}}, 201)
		c.must("PUT", "/api/v1/buses/bus099/rules/all/targets/hook", httpTarget(r.srv.URL), 201)
		want := map[string]bool{}
		var evs []map[string]any
		for i := range 50 {
			id := fmt.Sprintf("%s-%d", c.account, i)
			evs = append(evs, event(id, "shop", "t", map[string]any{"i": i}))
			want[id] = true
		}
		c.putBatch("bus099", evs)
		r.waitFor(t, want)
	}

	// The budget is 50 MiB, 20 MiB of it reserved by the dead letters of 20 accounts. A bus of 40 MiB of its own
	// does not fit its account's quota (10 MiB); buses of 8 MiB fit their accounts' quotas until the budget is
	// reached; meanwhile another account still creates buses and puts events.
	for i := 1; i <= 5; i++ { // room under the bus quota (100)
		clients[i].must("DELETE", "/api/v1/buses/bus000", nil, 204)
	}
	status, out := clients[1].do("POST", "/api/v1/buses", "application/json", []byte(`{"name": "big", "retention": {"maxBytes": 41943040}}`))
	require.Equal(t, 409, status, string(out))
	var p struct{ Code, Field string }
	require.NoError(t, json.Unmarshal(out, &p))
	assert.Equal(t, "AccountStorageQuotaExceeded retention.maxBytes", p.Code+" "+p.Field)
	for i := 1; i <= 3; i++ { // 20 + 3 × 8 = 44 MiB
		clients[i].must("POST", "/api/v1/buses", map[string]any{"name": "sized", "retention": map[string]any{"maxBytes": 8 << 20}}, 201)
	}
	status, out = clients[4].do("POST", "/api/v1/buses", "application/json", []byte(`{"name": "sized", "retention": {"maxBytes": 8388608}}`))
	require.Equal(t, 409, status, string(out))
	require.NoError(t, json.Unmarshal(out, &p))
	assert.Equal(t, "StorageBudgetExceeded retention.maxBytes", p.Code+" "+p.Field)
	clients[5].must("POST", "/api/v1/buses", map[string]any{"name": "bus000"}, 201)
	clients[5].putBatch("bus000", []map[string]any{event("x", "shop", "t", nil)})
}
