// Package inputtransformer is the input-transformer transform plugin: it applies a target's input transformer
// (domain/transform: Amazon EventBridge's inputTransformer, input and inputPath, and Apache RocketMQ
// EventBridge's ORIGINAL, CONSTANT, JSONPATH and TEMPLATE forms) to every record before the sink writes it. The
// record's data and datacontenttype become the transformer's output, and the attributes that the spec's
// attributes name (subject, type, source, dataschema, extensions) take the values of their templates; the other
// attributes stay. A spec of attributes alone keeps the data as it is.
//
// A connector uses it as Kafka Connect uses a single message transform:
//
//	transforms=input
//	transforms.input.type=input-transformer
//	transforms.input.spec={"inputTransformer": {"inputPathsMap": {"id": "$.data.orderId"}, "inputTemplate": "{\"order\": <id>}"}, "attributes": {"subject": "orders/<id>"}}
package inputtransformer

import (
	"context"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/domain/transform"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's transforms.<name>.type.
const Name = "input-transformer"

// KeySpec is the key of the transformer: the JSON form of a transform.Spec.
const KeySpec = "spec"

// Keys of what the transformer knows besides the event (transform.Options): the format of the target (FormatAWS
// makes it see AWS's envelope, and deliver the envelope when the spec has no data form), the rule's name and ARN
// (<aws.events.rule-name>, <aws.events.rule-arn>), the account and region of the envelope for events that carry
// none.
const (
	KeyFormat   = "format"
	KeyRuleName = "rule.name"
	KeyRuleARN  = "rule.arn"
	KeyAccount  = "aws.account"
	KeyRegion   = "aws.region"
)

// Formats of KeyFormat.
const (
	FormatCloudEvents = "cloudevents"
	FormatAWS         = "aws"
)

func init() { connector.RegisterTransform(Plugin()) }

// Plugin returns the input-transformer plugin.
func Plugin() connector.TransformPlugin {
	return connector.TransformPlugin{
		Name:    Name,
		Version: "1.0.0",
		Doc:     "Replaces the data of each event with the output of an input transformer, and sets the attributes it configures.",
		Spec: connector.Spec{
			{Name: KeySpec, Title: "Transformer", Type: connector.TypeJSON, Required: true,
				Example: `{"inputTransformer": {"inputPathsMap": {"id": "$.data.orderId"}, "inputTemplate": "{\"order\": <id>}"}}`,
				Doc: `The transformer, one of: {"inputTransformer": {"inputPathsMap": {...}, "inputTemplate": "..."}}, ` +
					`{"input": "<JSON text>"}, {"inputPath": "$.data"}, {"transform": {"form": "ORIGINAL|CONSTANT|JSONPATH|TEMPLATE", "value": "...", "template": "..."}}; ` +
					`each may have, or be only, "attributes": {"<attribute>": "<text template>", ...}. With format aws, {} delivers AWS's envelope.`},
			{Name: KeyFormat, Title: "Input format", Type: connector.TypeEnum, Default: FormatCloudEvents, Enum: []string{FormatCloudEvents, FormatAWS},
				Doc: "What the transformer sees: the CloudEvent's JSON form, or the event in Amazon EventBridge's envelope (aws)."},
			{Name: KeyRuleName, Title: "Rule name", Type: connector.TypeString, Example: "orders-to-billing",
				Doc: "The rule's name, the value of <aws.events.rule-name> in templates."},
			{Name: KeyRuleARN, Title: "Rule ARN", Type: connector.TypeString,
				Example: "arn:aws:events:eu-west-1:123456789012:rule/orders/orders-to-billing",
				Doc:     "The rule's ARN, the value of <aws.events.rule-arn> in templates."},
			{Name: KeyAccount, Title: "AWS account", Type: connector.TypeString, Example: "123456789012",
				Doc: "The account in AWS's envelope of events that carry none: the envelope format aws and <aws.events.event> show."},
			{Name: KeyRegion, Title: "AWS region", Type: connector.TypeString, Example: "eu-west-1",
				Doc: "The region in AWS's envelope of events that carry none: the envelope format aws and <aws.events.event> show."},
		},
		New: New,
	}
}

// Transform applies one compiled transformer. Safe for concurrent use.
type Transform struct {
	t *transform.Transformer
}

var _ connector.Transform = (*Transform)(nil)

// New compiles the transformer of cfg once; problems are connector.FieldErrors of KeySpec naming the field of the
// spec at fault.
func New(cfg connector.Values, _ connector.Env) (connector.Transform, error) {
	spec, err := transform.ParseSpec([]byte(cfg.String(KeySpec)))
	if err != nil {
		return nil, connector.FieldErrors{{Key: KeySpec, Message: err.Error()}}
	}
	t, err := transform.CompileWith(spec, transform.Options{RuleName: cfg.String(KeyRuleName), RuleARN: cfg.String(KeyRuleARN),
		Account: cfg.String(KeyAccount), Region: cfg.String(KeyRegion), Envelope: cfg.String(KeyFormat) == FormatAWS})
	if err != nil {
		// Compile's messages name the field of the spec at fault (inputTransformer.inputTemplate, ...).
		return nil, connector.FieldErrors{{Key: KeySpec, Message: err.Error()}}
	}
	return &Transform{t: t}, nil
}

// Apply returns e with the transformer's output as its data and the attributes it sets. An event whose JSON form
// cannot be built, whose output would be too large, or for which an attribute's template makes a value the
// attribute cannot take (an empty type or source, ...) is an error (the record is given up).
func (t *Transform) Apply(_ context.Context, e *event.Event) ([]*event.Event, error) {
	out, err := t.t.Apply(e)
	if err != nil {
		return nil, err
	}
	return []*event.Event{out}, nil
}
