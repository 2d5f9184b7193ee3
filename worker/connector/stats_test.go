package connector_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

func TestReportMatched(t *testing.T) {
	t.Parallel()
	// Without a Report in ctx, reporting does nothing (and does not panic).
	connector.ReportMatched(context.Background(), 3)

	r := new(connector.Report)
	ctx := connector.WithReport(context.Background(), r)
	for _, copies := range []int{0, 1, 2, -1} {
		connector.ReportMatched(ctx, copies)
	}
	assert.Equal(t, connector.RecordStats{Matched: 2, Unmatched: 2, Routed: 3}, r.Stats())
}

func TestReportRoutedTo(t *testing.T) {
	t.Parallel()
	connector.ReportRoutedTo(context.Background(), []string{"r1"}) // no Report: nothing, no panic

	r := new(connector.Report)
	assert.Nil(t, r.RoutedTo())
	ctx := connector.WithReport(context.Background(), r)
	connector.ReportRoutedTo(ctx, []string{"r1", "r2"})
	connector.ReportRoutedTo(ctx, nil)
	connector.ReportRoutedTo(ctx, []string{"r1"})
	assert.Equal(t, connector.RecordStats{Matched: 2, Unmatched: 1, Routed: 3}, r.Stats())
	to := r.RoutedTo()
	assert.Equal(t, map[string]uint64{"r1": 2, "r2": 1}, to)
	to["r1"] = 100
	assert.Equal(t, uint64(2), r.RoutedTo()["r1"], "a copy")

	sum := r.AddRoutedTo(map[string]uint64{"r1": 5, "r3": 1})
	assert.Equal(t, map[string]uint64{"r1": 7, "r2": 1, "r3": 1}, sum, "added to what the map held")
	assert.Equal(t, map[string]uint64{"r1": 7, "r2": 1, "r3": 1}, new(connector.Report).AddRoutedTo(sum),
		"an empty report adds nothing")
	assert.Nil(t, new(connector.Report).AddRoutedTo(nil), "no map made for nothing")
	assert.Equal(t, map[string]uint64{"r1": 2, "r2": 1}, r.AddRoutedTo(nil), "a map made for what there is")
}
