package web_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/domain/session"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/persistence"
	"github.com/eventbridge-go/eventbridge/web"
)

// sideBySide runs call through router 0 (the baseline) and router 1 alternately from 4 callers on 2 cores, so that
// both see the same load, and reports the calls per second through each (the time spent in its requests) and
// their ratio, under the names base and other.
func sideBySide(b *testing.B, base, other string, call func(which int)) {
	var spent [2]atomic.Int64
	var turn atomic.Int64
	timed := func(which int) {
		start := time.Now()
		call(which)
		spent[which].Add(int64(time.Since(start)))
	}
	b.SetParallelism(2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			first := int(turn.Add(1) % 2)
			timed(first)
			timed(1 - first)
		}
	})
	b.StopTimer()
	callers := float64(2 * runtime.GOMAXPROCS(0))
	rate := func(i int) float64 { return float64(b.N) / (time.Duration(spent[i].Load()).Seconds() / callers) }
	b.ReportMetric(rate(0), base+"-calls/s")
	b.ReportMetric(rate(1), other+"-calls/s")
	b.ReportMetric(rate(1)/rate(0), other+"/"+base)
}

// BenchmarkAudit measures control operations through the router (in process, SQLite) with the audit log as the
// control plane runs it (the recorder's batches running: a read's entry is queued, a change's written before the
// answer) side by side with the same router without one (bare): a read (GET a bus) and a change (PATCH its
// description).
func BenchmarkAudit(b *testing.B) {
	e := newEnv(b, natsServer(b), persistence.SQLite)
	bare := e.services
	bare.Audit = nil
	audited := e.services
	repo := persistence.NewAuditRepository(e.db)
	rec := &audit.Recorder{Entries: repo}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	audited.Audit = rec
	log := slog.New(slog.DiscardHandler)
	routers := [2]http.Handler{newRouter(web.Config{Logger: log}, bare), newRouter(web.Config{Logger: log}, audited)}
	for _, name := range []string{"b0", "b1"} {
		require.Equal(b, http.StatusCreated, e.do(b, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": name}).Status)
	}
	serve := func(which int, method, path, body string) {
		req := localRequest(method, path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.adminKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		routers[which].ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Errorf("%s %s answered %d: %s", method, path, w.Code, w.Body)
		}
	}
	b.Run("read", func(b *testing.B) {
		sideBySide(b, "bare", "audited", func(which int) { serve(which, http.MethodGet, fmt.Sprintf("/api/v1/buses/b%d", which), "") })
	})
	var n atomic.Int64
	b.Run("change", func(b *testing.B) {
		sideBySide(b, "bare", "audited", func(which int) {
			serve(which, http.MethodPatch, fmt.Sprintf("/api/v1/buses/b%d", which), fmt.Sprintf(`{"description": "d%d"}`, n.Add(1)))
		})
	})
}

// BenchmarkSessionAuth measures a read (GET a bus) authenticated by a session cookie (session.Service with its
// default cache, as in production) side by side with the same read authenticated by an API key (apikey.Service with
// its default cache).
func BenchmarkSessionAuth(b *testing.B) {
	e := newEnv(b, natsServer(b), persistence.SQLite)
	e.services.Audit = nil
	repo := persistence.NewSessionRepository(e.db)
	sessions := &session.Service{Sessions: repo, Failures: repo, Users: e.services.Users}
	e.services.Sessions = sessions
	e.services.Users.Sessions = sessions
	keyed := e.services
	keyed.APIKeys.CacheTTL = 0 // the default cache
	r := newRouter(web.Config{Logger: slog.New(slog.DiscardHandler)}, keyed)
	require.Equal(b, http.StatusCreated, e.do(b, http.MethodPost, "/api/v1/buses", nil, map[string]any{"name": "b"}).Status)
	key := keyOf(b, e.services, "default", access.Viewer)
	_, err := e.services.Users.Create(context.Background(), userSpec("alice"))
	require.NoError(b, err)
	_, _, err = e.services.Users.SetMember(context.Background(), "default", "alice", access.Viewer)
	require.NoError(b, err)
	_, token, err := sessions.Login(context.Background(), "alice", "password-alice", session.Client{Addr: "192.0.2.1"})
	require.NoError(b, err)
	sideBySide(b, "apiKey", "session", func(which int) {
		req := localRequest(http.MethodGet, "/api/v1/buses/b", nil)
		if which == 0 {
			req.Header.Set("Authorization", "Bearer "+key)
		} else {
			req.AddCookie(&http.Cookie{Name: web.SessionCookie, Value: token})
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Errorf("answered %d: %s", w.Code, w.Body)
		}
	})
}

// userSpec is a user named name with the password "password-<name>".
func userSpec(name string) user.Spec { return user.Spec{Username: name, Password: "password-" + name} }
