package worker_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/stream"
	"github.com/eventbridge-go/eventbridge/worker/plugins/router"
)

// The worker ensures the event-types stream, and a router connector whose config has the event-types keys (as the
// control plane writes them) reports there the event types it routed.
func TestRouterReportsEventTypesThroughTheWorker(t *testing.T) {
	t.Parallel()
	env := busEnv(t)
	_, client := startWorker(t, env)
	ctx := context.Background()
	st, err := env.JS.Stream(ctx, names.EventTypesStream())
	require.NoError(t, err, "the worker ensures the event-types stream")

	cfg := routerConfig(t, rule("r1", "order.created", 0))
	cfg[router.KeyEventTypesSubject] = names.EventTypesSubject(bus)
	cfg[router.KeyEventTypesInterval] = "100"
	cfg[router.KeyBusID] = bus
	_, err = client.CreateConnector(ctx, rpc.CreateConnectorRequest{Name: routerName(), Config: cfg})
	require.NoError(t, err)
	put(t, env, "e1", "order.created")
	put(t, env, "e2", "order.created")
	put(t, env, "e3", "order.paid")

	var got []stream.ObservedType
	require.Eventually(t, func() bool {
		got = nil
		for seq := uint64(1); ; seq++ {
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				require.ErrorIs(t, err, jetstream.ErrMsgNotFound)
				break
			}
			assert.Equal(t, names.EventTypesSubject(bus), m.Subject)
			r, err := stream.DecodeEventTypesReport(m.Data)
			require.NoError(t, err)
			assert.Equal(t, bus, r.BusID)
			got = append(got, r.Types...)
		}
		n := int64(0)
		for _, o := range got {
			n += o.Count
		}
		return n == 3
	}, wait, tick)
	counts := map[string]int64{}
	for _, o := range got {
		assert.Equal(t, "test/source", o.Source)
		assert.NotEmpty(t, o.Samples, "the events' data are JSON objects")
		assert.False(t, o.FirstSeen.IsZero())
		counts[o.Type] += o.Count
	}
	assert.Equal(t, map[string]int64{"order.created": 2, "order.paid": 1}, counts)
}
