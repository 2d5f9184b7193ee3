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
