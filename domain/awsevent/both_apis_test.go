package awsevent_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/domain/cloudevent"
	"github.com/eventbridge-go/eventbridge/domain/pattern"
)

// TestPatternsOfBothAPIs: a pattern written for AWS (rewritten) and the same pattern written for CloudEvents agree on
// every event, whether AWS's PutEvents stored it (FromEntry) or CloudEvents' PutEvents did (a structured event),
// so a rule of either API selects the same events of a bus.
func TestPatternsOfBothAPIs(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	fromAWS := func(source, detailType, detail string, resources ...string) []byte {
		e, err := awsevent.FromEntry(awsevent.Entry{Source: source, DetailType: detailType, Detail: detail, Resources: resources},
			"id-1", "123456789012", "us-east-1", at)
		require.NoError(t, err)
		b, err := cloudevent.MatchView(e)
		require.NoError(t, err)
		return b
	}
	fromCE := func(raw string) []byte {
		e, err := cloudevent.Unmarshal([]byte(raw))
		require.NoError(t, err)
		b, err := cloudevent.MatchView(e)
		require.NoError(t, err)
		return b
	}
	events := map[string][]byte{
		"aws: big order":   fromAWS("shop", "OrderPlaced", `{"total": 150, "items": ["a", "b"]}`, "arn:aws:s3:::bucket"),
		"aws: small order": fromAWS("shop", "OrderPlaced", `{"total": 5}`),
		"aws: payment":     fromAWS("pay.service", "PaymentMade", `{"total": 150}`),
		"ce: big order": fromCE(`{"specversion":"1.0","id":"c1","source":"shop","type":"OrderPlaced",` +
			`"datacontenttype":"application/json","data":{"total":300,"items":["b"]},"resources":"[\"arn:aws:s3:::bucket\"]"}`),
		"ce: small order": fromCE(`{"specversion":"1.0","id":"c2","source":"shop","type":"OrderPlaced","data":{"total":1}}`),
		"ce: payment": fromCE(`{"specversion":"1.0","id":"c3","source":"pay.service","type":"PaymentMade",` +
			`"account":"123456789012","data":{"total":150}}`),
	}
	pairs := []struct{ name, aws, ce string }{
		{"source and detail-type", `{"source":["shop"],"detail-type":["OrderPlaced"]}`, `{"source":["shop"],"type":["OrderPlaced"]}`},
		{"numeric in detail", `{"detail":{"total":[{"numeric":[">",100]}]}}`, `{"data":{"total":[{"numeric":[">",100]}]}}`},
		{"array element in detail", `{"detail":{"items":["a"]}}`, `{"data":{"items":["a"]}}`},
		{"resources element", `{"resources":[{"prefix":"arn:aws:s3"}]}`, `{"resources":[{"prefix":"arn:aws:s3"}]}`},
		{"account", `{"account":["123456789012"]}`, `{"account":["123456789012"]}`},
		{"prefix and anything-but", `{"source":[{"prefix":"pay"}],"detail-type":[{"anything-but":"OrderPlaced"}]}`,
			`{"source":[{"prefix":"pay"}],"type":[{"anything-but":"OrderPlaced"}]}`},
		{"$or across both", `{"$or":[{"detail-type":["PaymentMade"]},{"detail":{"total":[{"numeric":["<",10]}]}}]}`,
			`{"$or":[{"type":["PaymentMade"]},{"data":{"total":[{"numeric":["<",10]}]}}]}`},
		{"exists", `{"detail":{"items":[{"exists":false}]}}`, `{"data":{"items":[{"exists":false}]}}`},
	}
	for _, p := range pairs {
		rewritten, err := awsevent.RewritePattern([]byte(p.aws))
		require.NoError(t, err, p.name)
		awsP, err := pattern.Compile(rewritten)
		require.NoError(t, err, p.name)
		ceP, err := pattern.Compile([]byte(p.ce))
		require.NoError(t, err, p.name)
		matched := 0
		for name, ev := range events {
			a, err := awsP.Match(ev)
			require.NoError(t, err)
			c, err := ceP.Match(ev)
			require.NoError(t, err)
			assert.Equalf(t, c, a, "%s on %s: the AWS pattern and the CloudEvents one agree", p.name, name)
			if a {
				matched++
			}
		}
		assert.Greaterf(t, matched, 0, "%s matches something", p.name)
		assert.Lessf(t, matched, len(events), "%s does not match everything", p.name)
	}
	// And each matches an event of the other API: the AWS pattern a CloudEvent, the CloudEvents one an AWS event.
	for _, c := range []struct{ pattern, event string }{
		{`{"detail-type":["OrderPlaced"],"detail":{"total":[{"numeric":[">",200]}]}}`, "ce: big order"},
		{`{"resources":["arn:aws:s3:::bucket"]}`, "ce: big order"},
	} {
		rewritten, err := awsevent.RewritePattern([]byte(c.pattern))
		require.NoError(t, err)
		p, err := pattern.Compile(rewritten)
		require.NoError(t, err)
		ok, err := p.Match(events[c.event])
		require.NoError(t, err)
		assert.True(t, ok, "%s matches %s", c.pattern, c.event)
	}
	p, err := pattern.Compile([]byte(`{"type":["OrderPlaced"],"data":{"total":[{"numeric":[">",100]}]}}`))
	require.NoError(t, err)
	ok, err := p.Match(events["aws: big order"])
	require.NoError(t, err)
	assert.True(t, ok, "a CloudEvents pattern matches an event of the AWS API")
}
