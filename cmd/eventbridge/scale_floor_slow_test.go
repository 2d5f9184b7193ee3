//go:build slow

package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/stream"
	ebdelivery "github.com/eventbridge-go/eventbridge/worker/delivery"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
)

// BenchmarkScaleIdleFloor is the bare baseline of TestSlowScaleIdle (`make bench-scale`): what JetStream alone costs
// while idle with the objects that the product's buses are made of, without any of the product's code. It starts the
// embedded server as the binary does (file store, the default fsync interval of 1 s), creates EB_SCALE_BUSES bus
// streams (the product's stream config: 1 MiB each, the default retention) with two durable consumers each (the
// product's consumer config: a router's on the bus's input subject, a target's on a rule's subject), and holds a
// core NATS subscription to each consumer's subject on one connection, as a parked task does. Then nothing happens
// for EB_SCALE_IDLE_S seconds, over which it reports the process's CPU (user and system, getrusage), as the scale
// test reads the binary's from /proc, and its memory.
func BenchmarkScaleIdleFloor(b *testing.B) {
	buses := envInt(b, "EB_SCALE_BUSES", 300)
	idle := time.Duration(envInt(b, "EB_SCALE_IDLE_S", 60)) * time.Second
	env := jetstreamtest.StartWith(b, ebjs.ServerConfig{SyncInterval: time.Second})
	names := stream.Names{Cluster: "eb"}
	ctx := context.Background()
	nc := env.Conn
	start := time.Now()
	for i := range buses {
		busID := fmt.Sprintf("b%05d", i)
		require.NoError(b, names.EnsureBusStream(ctx, env.JS, busID, bus.DefaultMaxAge, 1<<20, 1))
		for _, c := range []ebdelivery.Config{
			{Stream: names.BusStream(busID), Durable: names.RouterConsumer(busID), Subject: names.BusIn(busID), Tasks: 1},
			{Stream: names.BusStream(busID), Durable: names.TargetConsumer("r"+busID, "t"+busID),
				Subject: names.RuleSubject(busID, "r"+busID), Tasks: 1},
		} {
			_, err := ebdelivery.EnsureConsumer(ctx, env.JS, c, ebdelivery.AckWait)
			require.NoError(b, err)
			_, err = nc.Subscribe(c.Subject, func(*nats.Msg) {})
			require.NoError(b, err)
		}
	}
	require.NoError(b, nc.Flush())
	created := time.Since(start)
	time.Sleep(5 * time.Second) // as the scale test lets its last tasks settle
	b.ResetTimer()
	for range b.N {
		cpu0 := processCPU()
		t0 := time.Now()
		time.Sleep(idle)
		busy := float64(processCPU()-cpu0) / float64(time.Since(t0))
		b.ReportMetric(100*busy, "idle_cpu_%")
	}
	b.StopTimer()
	_, rss, threads := procStat(b, os.Getpid())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(rss>>20), "rss_MiB")
	b.ReportMetric(float64(ms.HeapInuse>>20), "heap_inuse_MiB")
	b.ReportMetric(float64(runtime.NumGoroutine()), "goroutines")
	b.ReportMetric(float64(threads), "threads")
	b.ReportMetric(float64(buses), "buses")
	b.ReportMetric(created.Seconds(), "create_s")
	b.ReportMetric(0, "ns/op")
}
