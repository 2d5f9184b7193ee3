package rpc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/rpc"
)

func TestTaskCountersAdd(t *testing.T) {
	t.Parallel()
	a := rpc.TaskCounters{Read: 1, Written: 2, Routed: 3, RoutedTo: map[string]uint64{"r1": 2, "r2": 1}}
	b := rpc.TaskCounters{Read: 10, DeadLettered: 1, Routed: 1, RoutedTo: map[string]uint64{"r1": 1}}
	sum := a.Add(b)
	assert.Equal(t, rpc.TaskCounters{Read: 11, Written: 2, DeadLettered: 1, Routed: 4, RoutedTo: map[string]uint64{"r1": 3, "r2": 1}}, sum)
	assert.Equal(t, uint64(2), a.RoutedTo["r1"], "neither operand changes")
	assert.Nil(t, rpc.TaskCounters{Read: 1}.Add(rpc.TaskCounters{}).RoutedTo)
}
