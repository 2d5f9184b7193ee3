package mqtt_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	"github.com/eventbridge-go/eventbridge/worker/delivery"
	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	"github.com/eventbridge-go/eventbridge/worker/plugins/mqtt"
)

// BenchmarkSource measures QoS 1 messages per second from a private Mosquitto through an mqtt-source task onto a
// JetStream bus stream (each acknowledged to the broker once stored), with 4 publishers.
func BenchmarkSource(b *testing.B) {
	br := startBroker(b, nil)
	env := jetstreamtest.Start(b)
	env.Stream(b, "BUS", "bus.in")
	src, err := mqtt.NewSource(sourceValues(map[string]string{mqtt.KeyURL: br.URL(), mqtt.KeyTopics: "bench/#"}),
		connector.Env{Egress: localBrokers, Connector: "bench"})
	require.NoError(b, err)
	task, err := delivery.StartSource(context.Background(), delivery.SourceTaskConfig{
		Source: src, JetStream: env.JS, Subject: "bus.in", Stream: "BUS", Tolerance: connector.ToleranceNone,
	})
	require.NoError(b, err)
	b.Cleanup(func() { _ = task.Stop(context.Background()) })
	const publishers = 4
	b.ResetTimer()
	done := make(chan struct{}, publishers)
	for p := range publishers {
		go func() {
			var msgs []outgoing
			for i := p; i < b.N; i += publishers {
				msgs = append(msgs, outgoing{topic: fmt.Sprintf("bench/%d", p), payload: fmt.Appendf(nil, `{"n":%d}`, i)})
			}
			if len(msgs) > 0 {
				publish5(b, br.addr(), msgs...)
			}
			done <- struct{}{}
		}()
	}
	for range publishers {
		<-done
	}
	deadline := time.Now().Add(2 * time.Minute)
	for task.Counters().Written < uint64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d messages stored after 2 minutes", task.Counters().Written, b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkSinkWrite measures QoS 1 writes per second of one mqtt sink to a private Mosquitto (each waiting for its
// PUBACK), from 16 concurrent writers as the runtime runs them.
func BenchmarkSinkWrite(b *testing.B) {
	br := startBroker(b, nil)
	s, err := mqtt.New(sinkValues(map[string]string{mqtt.KeyURL: br.URL(), mqtt.KeyTopic: "bench/{type}"}),
		connector.Env{Egress: localBrokers, Connector: "bench"})
	require.NoError(b, err)
	require.NoError(b, s.Connect(context.Background()))
	b.Cleanup(func() { _ = s.Close() })
	e := jetstreamtest.Event("e", "bench.event", map[string]any{"n": 1})
	var failed atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if s.Write(context.Background(), e) != nil {
				failed.Add(1)
			}
		}
	})
	b.StopTimer()
	require.Zero(b, failed.Load())
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}
