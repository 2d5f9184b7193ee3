package transform_test

import (
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/transform"
)

// awsEvent is a CloudEvent as the AWS API stores one (awsevent.FromEntry), with resources.
func awsEvent(t *testing.T) *event.Event {
	t.Helper()
	e := event.New()
	e.SetID("e-1")
	e.SetSource("shop")
	e.SetType("OrderPlaced")
	e.SetTime(time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC))
	e.SetExtension("account", "123456789012")
	e.SetExtension("region", "eu-west-1")
	e.SetExtension("resources", `["arn:a","arn:b"]`)
	e.SetDataContentType("application/json")
	e.DataEncoded = []byte(`{"orderId": 7, "total": 150}`) // byte for byte, as PutEvents stores it
	return &e
}

// TestAWSView: a transformer of a target in AWS's format sees AWS's envelope and the predefined variables; the
// same spec without the view sees the CloudEvent.
func TestAWSView(t *testing.T) {
	t.Parallel()
	opts := transform.Options{RuleName: "big-orders", RuleARN: "arn:aws:events:eu-west-1:123456789012:rule/orders/big-orders",
		Account: "999999999999", Region: "us-east-1", Envelope: true}
	envelope := `{"version":"0","id":"e-1","detail-type":"OrderPlaced","source":"shop","account":"123456789012",` +
		`"time":"2026-12-03T10:00:00Z","region":"eu-west-1","resources":["arn:a","arn:b"],"detail":{"orderId":7,"total":150}}`
	str := func(s string) *string { return &s }
	cases := []struct {
		name string
		spec transform.Spec
		want string
	}{
		{"no data form delivers the envelope", transform.Spec{}, envelope},
		{"$ is the envelope", transform.Spec{InputPath: str("$")}, envelope},
		{"paths over the envelope", transform.Spec{InputTransformer: &transform.InputTransformer{
			InputPathsMap: map[string]string{"id": "$.detail.orderId", "kind": "$.detail-type", "first": "$.resources[0]", "acct": "$.account"},
			InputTemplate: `{"id": <id>, "kind": <kind>, "first": <first>, "acct": <acct>}`}},
			`{"id": 7, "kind": "OrderPlaced", "first": "arn:a", "acct": "123456789012"}`},
		{"predefined variables", transform.Spec{InputTransformer: &transform.InputTransformer{
			InputTemplate: `{"rule": <aws.events.rule-name>, "arn": <aws.events.rule-arn>, "at": <aws.events.event.ingestion-time>, ` +
				`"event": <aws.events.event>, "whole": <aws.events.event.json>}`}},
			`{"rule": "big-orders", "arn": "arn:aws:events:eu-west-1:123456789012:rule/orders/big-orders", "at": "2026-12-03T10:00:00Z", ` +
				`"event": {"version":"0","id":"e-1","detail-type":"OrderPlaced","source":"shop","account":"123456789012",` +
				`"time":"2026-12-03T10:00:00Z","region":"eu-west-1","resources":["arn:a","arn:b"]}, "whole": ` + envelope + `}`},
		{"a text template", transform.Spec{InputTransformer: &transform.InputTransformer{
			InputPathsMap: map[string]string{"id": "$.detail.orderId"}, InputTemplate: `Order <id> matched <aws.events.rule-name>`}},
			`Order 7 matched big-orders`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tr, err := transform.CompileWith(tc.spec, opts)
			require.NoError(t, err)
			out, err := tr.Output(awsEvent(t))
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(out.Data))
		})
	}

	// Without the envelope, the same paths read the CloudEvent (where detail is data), and the rule variables
	// are there when given.
	tr, err := transform.CompileWith(transform.Spec{InputTransformer: &transform.InputTransformer{
		InputPathsMap: map[string]string{"id": "$.data.orderId", "none": "$.detail.orderId"},
		InputTemplate: `{"id": <id>, "none": <none>, "rule": <aws.events.rule-name>}`}}, transform.Options{RuleName: "r"})
	require.NoError(t, err)
	out, err := tr.Output(awsEvent(t))
	require.NoError(t, err)
	assert.Equal(t, `{"id": 7, "none": null, "rule": "r"}`, string(out.Data))

	_, err = transform.Compile(transform.Spec{})
	assert.Error(t, err, "a zero spec without the envelope declares nothing")
	_, err = transform.CompileWith(transform.Spec{InputTransformer: &transform.InputTransformer{
		InputPathsMap: map[string]string{"aws.events.rule-name": "$.id"}, InputTemplate: "<aws.events.rule-name>"}}, opts)
	assert.Error(t, err, "a predefined variable cannot be declared")
}
