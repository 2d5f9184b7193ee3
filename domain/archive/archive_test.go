package archive_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/archive"
	"github.com/eventbridge-go/eventbridge/domain/rule"
)

func TestNew(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		archive   string
		pattern   string
		days      int
		wantField string
		wantErr   error
	}{
		{name: "every event, kept indefinitely", archive: "all"},
		{name: "a pattern and 30 days", archive: "orders", pattern: `{"type": ["order.created"]}`, days: 30},
		{name: "null is no pattern", archive: "n", pattern: `null`},
		{name: "the longest retention", archive: "long", days: archive.MaxRetentionDays},
		{name: "negative retention", archive: "neg", days: -1, wantField: "retentionDays"},
		{name: "retention over the maximum", archive: "over", days: archive.MaxRetentionDays + 1, wantField: "retentionDays"},
		{name: "a scalar where an array belongs", archive: "bad", pattern: `{"type": "order.created"}`, wantErr: rule.ErrInvalidEventPattern},
		{name: "a name with a dot", archive: "a.b", wantField: "name"},
		{name: "no name", archive: "", wantField: "name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p []byte
			if tc.pattern != "" {
				p = []byte(tc.pattern)
			}
			a, err := archive.New("acct", "bus1", tc.archive, "d", p, tc.days, now)
			switch {
			case tc.wantErr != nil:
				require.Error(t, err)
				assert.True(t, errors.Is(err, tc.wantErr), "%v", err)
			case tc.wantField != "":
				require.Error(t, err)
				de, ok := domain.As(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, tc.wantField, de.Field)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.days, a.RetentionDays())
				assert.Equal(t, time.Duration(tc.days)*24*time.Hour, a.Retention())
				assert.Equal(t, archive.Enabled, a.State())
				if tc.pattern == "" || tc.pattern == "null" {
					assert.Nil(t, a.EventPattern(), "no pattern: every event")
				} else {
					assert.JSONEq(t, tc.pattern, string(a.EventPattern()))
				}
			}
		})
	}
}
