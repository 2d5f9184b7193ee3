package http_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"
)

// BenchmarkWrite measures one delivery of a plain event in binary mode through the sink's Write (the defaults:
// headers, body, the request and its answer) side by side with a bare Go HTTP client posting the same headers and
// body to the same receiver, both with writeConcurrency requests in flight, in alternating rounds of one loop. It
// reports the time per request of each and their ratio: what the sink adds to the request a bare client makes.
func BenchmarkWrite(b *testing.B) {
	const writeConcurrency = 64 // a task's records in flight (delivery.MaxInFlight)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(srv.Close)
	sink := newSink(b, map[string]string{"url": srv.URL}, true)
	e := orderEvent()
	e.SetTime(time.Now())

	// The bare client sends what the sink sends, made once.
	var hdr http.Header
	var body []byte
	capture := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
	}))
	if err := newSink(b, map[string]string{"url": capture.URL}, true).Write(context.Background(), e); err != nil {
		b.Fatal(err)
	}
	capture.Close()
	for _, k := range []string{"Accept-Encoding", "Content-Length", "User-Agent"} {
		hdr.Del(k) // the transport writes them
	}
	bare := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: writeConcurrency}, Timeout: 5 * time.Second}
	b.Cleanup(bare.CloseIdleConnections)
	post := func() error {
		req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header = hdr.Clone()
		resp, err := bare.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	write := func() error { return sink.Write(context.Background(), e) }

	// round runs n requests of do with writeConcurrency in flight and returns how long they took.
	round := func(n int, do func() error) time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		per := (n + writeConcurrency - 1) / writeConcurrency
		for g := 0; g < writeConcurrency && g*per < n; g++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				for range k {
					if err := do(); err != nil {
						b.Error(err)
						return
					}
				}
			}(min(per, n-g*per))
		}
		wg.Wait()
		return time.Since(start)
	}
	round(writeConcurrency, write) // connections opened
	round(writeConcurrency, post)
	const chunk = 2048
	var ours, theirs time.Duration
	var oursAllocs, theirsAllocs uint64 // the receiver's included in both
	mallocs := func() uint64 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.Mallocs
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		n := min(chunk, b.N-done)
		m := mallocs()
		ours += round(n, write)
		m2 := mallocs()
		theirs += round(n, post)
		oursAllocs, theirsAllocs = oursAllocs+m2-m, theirsAllocs+mallocs()-m2
	}
	b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "sink-ns/op")
	b.ReportMetric(float64(theirs.Nanoseconds())/float64(b.N), "bare-ns/op")
	b.ReportMetric(float64(ours)/float64(theirs), "ratio")
	b.ReportMetric(float64(oursAllocs)/float64(b.N), "sink-allocs/op")
	b.ReportMetric(float64(theirsAllocs)/float64(b.N), "bare-allocs/op")
	b.ReportMetric(0, "ns/op")
}
