package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/account"
)

// The calls below are those of hashicorp/terraform-provider-aws, internal/service/events (read in its sources: bus.go,
// rule.go, target.go, connection.go, api_destination.go, archive.go, find.go, status.go, errors.go, tags_gen.go, and
// internal/provider/sdkv2/tags_interceptor.go for the tags). Each step names the provider's function it replays.
// Attributes are kept as the provider keeps them in its state (the names of its schema), so that what a refresh reads
// can be compared with the configuration as `terraform plan` compares them.

// The provider's waits and retries run for minutes against AWS; here they are bounded.
const (
	tfTries = 10
	tfDelay = 200 * time.Millisecond
)

// tfErrIs is tfawserr.ErrMessageContains as the provider uses it: an API error of that code whose message contains msg.
func tfErrIs(err error, code, msg string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code && strings.Contains(ae.ErrorMessage(), msg)
}

// tfRetryWhenNotFound is tfresource.RetryWhenNotFound over a find function whose ResourceNotFoundException is
// retry.NotFoundError (rule.go findRuleByTwoPartKey): it calls fn again while the resource is not found.
func tfRetryWhenNotFound(fn func() error) (tries int, err error) {
	for tries = 1; ; tries++ {
		err = fn()
		if apiErrorCode(err) != "ResourceNotFoundException" || tries == tfTries {
			return tries, err
		}
		time.Sleep(tfDelay)
	}
}

// tfRetryWhenMessageContains is tfresource.RetryWhenAWSErrMessageContains: it calls fn again while it answers the
// error code with a message containing msg; refused sees each such answer.
func tfRetryWhenMessageContains(fn func() error, code, msg string, refused func(error)) (tries int, err error) {
	for tries = 1; ; tries++ {
		err = fn()
		if !tfErrIs(err, code, msg) || tries == tfTries {
			return tries, err
		}
		if refused != nil {
			refused(err)
		}
		time.Sleep(tfDelay)
	}
}

// tfWaitConnection is connection.go waitConnectionCreated/Updated/Deleted (retry.StateChangeConf over
// statusConnectionState, whose not found is the state ""): it reads the connection until its state is one of target,
// or, with no target, until it is gone.
func tfWaitConnection(ctx context.Context, eb *eventbridge.Client, name string, pending, target []string) (int, error) {
	for tries := 1; ; tries++ {
		out, err := eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: &name})
		state := ""
		switch {
		case apiErrorCode(err) == "ResourceNotFoundException":
		case err != nil:
			return tries, err
		default:
			state = string(out.ConnectionState)
		}
		switch {
		case len(target) == 0 && state == "", state != "" && tfContains(target, state):
			return tries, nil
		case tries == tfTries:
			return tries, fmt.Errorf("connection %s still %q after %d reads", name, state, tries)
		case state != "" && !tfContains(pending, state):
			return tries, fmt.Errorf("connection %s: unexpected state %q", name, state)
		}
		time.Sleep(tfDelay)
	}
}

func tfContains(l []string, s string) bool {
	for _, v := range l {
		if v == s {
			return true
		}
	}
	return false
}

// tfRuleEventPattern is the rule's event_pattern as the provider sends and keeps it (rule.go
// ruleEventPatternJSONDecoder, its StateFunc, also applied to what DescribeRule answers): the JSON decoded and encoded
// again (compact, object keys sorted) with <, > and & left as they are.
func tfRuleEventPattern(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return s
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// tfNormalizeJSON is structure.NormalizeJsonString, which archive.go applies to the archive's event_pattern (sent
// and kept so): decoded and encoded again by encoding/json, compact, keys sorted, and <, > and & escaped (\u003e).
func tfNormalizeJSON(s string) string {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return s
	}
	return string(b)
}

// tfUniqueID is the id terraform-plugin-sdk's id.UniqueId() makes, which target.go resourceTargetCreate gives a
// target without target_id: "terraform-", the UTC time to 1/10000 s and an 8-hex-digit counter.
func tfUniqueID(counter int) string {
	ts := strings.Replace(time.Now().UTC().Format("20060102150405.0000"), ".", "", 1)
	return fmt.Sprintf("terraform-%s%08x", ts, counter)
}

// tfTags is the provider's []types.Tag of a tags map (tags_gen.go Tags).
func tfTags(m map[string]string) []types.Tag {
	out := make([]types.Tag, 0, len(m))
	for k, v := range m {
		out = append(out, types.Tag{Key: awssdk.String(k), Value: awssdk.String(v)})
	}
	return out
}

// tfListTags is tags_gen.go ListTags: ListTagsForResource on the resource's ARN, which the tags interceptor
// (tags_interceptor.go, After Create/Read/Update) calls after the resource's own read to set tags and tags_all.
func tfListTags(ctx context.Context, eb *eventbridge.Client, arn string) (map[string]string, error) {
	out, err := eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: &arn})
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, tg := range out.Tags {
		m[awssdk.ToString(tg.Key)] = awssdk.ToString(tg.Value)
	}
	return m, nil
}

// tfUpdateTags is tags_gen.go UpdateTags, which the tags interceptor calls Before Update when tags_all changes:
// UntagResource with the keys removed, then TagResource with the tags added or changed.
func tfUpdateTags(ctx context.Context, eb *eventbridge.Client, arn string, old, new map[string]string) error {
	var removed []string
	for k := range old {
		if _, ok := new[k]; !ok {
			removed = append(removed, k)
		}
	}
	if len(removed) > 0 {
		sort.Strings(removed)
		if _, err := eb.UntagResource(ctx, &eventbridge.UntagResourceInput{ResourceARN: &arn, TagKeys: removed}); err != nil {
			return err
		}
	}
	updated := map[string]string{}
	for k, v := range new {
		if o, ok := old[k]; !ok || o != v {
			updated[k] = v
		}
	}
	if len(updated) > 0 {
		_, err := eb.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: &arn, Tags: tfTags(updated)})
		return err
	}
	return nil
}

// tfState is a resource's attributes as the provider keeps them: string, int, bool, map[string]string, []string and
// blocks as []map[string]any.
type tfState = map[string]any

// tfNorm makes values Terraform does not tell apart equal: an empty list, map or block is none.
func tfNorm(v any) any {
	switch x := v.(type) {
	case []map[string]any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, m := range x {
			out[i] = tfNorm(m)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if n := tfNorm(e); n != nil {
				out[k] = n
			}
		}
		return out
	case map[string]string:
		if len(x) == 0 {
			return nil
		}
	case []string:
		if len(x) == 0 {
			return nil
		}
	}
	return v
}

// tfPlanDiff is the attributes of config that a plan would change given the state a refresh read: config holds
// every attribute of the configuration the provider compares (Optional and not Computed ones with their zero value
// when not written), after the schema's StateFunc.
func tfPlanDiff(config, state tfState) []string {
	var diff []string
	for k, want := range config {
		if !assert.ObjectsAreEqual(tfNorm(want), tfNorm(state[k])) {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return diff
}

// tfReadBus is bus.go resourceBusRead (findEventBusByName: DescribeEventBus by the resource id, the bus's name)
// and the tags interceptor's ListTags.
func tfReadBus(ctx context.Context, eb *eventbridge.Client, name string) (tfState, error) {
	out, err := eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: &name})
	if err != nil {
		return nil, err
	}
	st := tfState{"arn": awssdk.ToString(out.Arn), "name": awssdk.ToString(out.Name),
		"description": awssdk.ToString(out.Description), "kms_key_identifier": awssdk.ToString(out.KmsKeyIdentifier)}
	if d := out.DeadLetterConfig; d != nil { // flattenDeadLetterConfig
		st["dead_letter_config"] = []map[string]any{{"arn": awssdk.ToString(d.Arn)}}
	}
	if l := out.LogConfig; l != nil { // flattenLogConfig
		st["log_config"] = []map[string]any{{"include_detail": string(l.IncludeDetail), "level": string(l.Level)}}
	}
	st["tags"], err = tfListTags(ctx, eb, awssdk.ToString(out.Arn))
	return st, err
}

// tfReadRule is rule.go resourceRuleRead: findRuleByTwoPartKey (DescribeRule with the bus and rule of the resource
// id "<bus>/<rule>"), event_pattern through ruleEventPatternJSONDecoder, event_bus_name from the id; then the tags
// interceptor's ListTags on the rule's ARN.
func tfReadRule(ctx context.Context, eb *eventbridge.Client, busName, ruleName string) (tfState, error) {
	out, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: &ruleName, EventBusName: &busName})
	if err != nil {
		return nil, err
	}
	st := tfState{"arn": awssdk.ToString(out.Arn), "description": awssdk.ToString(out.Description),
		"event_bus_name": busName, "name": awssdk.ToString(out.Name), "role_arn": awssdk.ToString(out.RoleArn),
		"schedule_expression": awssdk.ToString(out.ScheduleExpression), "state": string(out.State),
		"is_enabled": out.State == types.RuleStateEnabled || out.State == types.RuleStateEnabledWithAllCloudtrailManagementEvents}
	if out.EventPattern != nil {
		st["event_pattern"] = tfRuleEventPattern(awssdk.ToString(out.EventPattern))
	}
	st["tags"], err = tfListTags(ctx, eb, awssdk.ToString(out.Arn))
	return st, err
}

// tfTargetNotFound is what target.go findTargets takes for a target that does not exist: ValidationException,
// ResourceNotFoundException, or a message ending in " not found"; and no target of that Id.
func tfTargetNotFound(err error) bool {
	c := apiErrorCode(err)
	return c == "ValidationException" || c == "ResourceNotFoundException" || (err != nil && strings.HasSuffix(err.Error(), " not found"))
}

var errTFNoTarget = errors.New("no target of that Id")

// tfReadTarget is target.go resourceTargetRead: findTargetByThreePartKey (ListTargetsByRule with Limit 100, every
// page, the target whose Id is target_id), and the attributes it sets.
func tfReadTarget(ctx context.Context, eb *eventbridge.Client, busName, ruleName, targetID string) (tfState, error) {
	in := &eventbridge.ListTargetsByRuleInput{Rule: &ruleName, EventBusName: &busName, Limit: awssdk.Int32(100)}
	var found []types.Target
	for {
		out, err := eb.ListTargetsByRule(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, tg := range out.Targets {
			if awssdk.ToString(tg.Id) == targetID {
				found = append(found, tg)
			}
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	if len(found) != 1 { // tfresource.AssertSingleValueResult
		return nil, errTFNoTarget
	}
	tg := found[0]
	st := tfState{"arn": awssdk.ToString(tg.Arn), "event_bus_name": busName, "rule": ruleName,
		"input": awssdk.ToString(tg.Input), "input_path": awssdk.ToString(tg.InputPath),
		"role_arn": awssdk.ToString(tg.RoleArn), "target_id": awssdk.ToString(tg.Id)}
	if h := tg.HttpParameters; h != nil { // flattenTargetHTTPParameters
		st["http_target"] = []map[string]any{{"header_parameters": h.HeaderParameters,
			"path_parameter_values": h.PathParameterValues, "query_string_parameters": h.QueryStringParameters}}
	}
	if it := tg.InputTransformer; it != nil { // flattenInputTransformer
		st["input_transformer"] = []map[string]any{{"input_template": awssdk.ToString(it.InputTemplate), "input_paths": it.InputPathsMap}}
	}
	if rp := tg.RetryPolicy; rp != nil { // flattenTargetRetryPolicy
		st["retry_policy"] = []map[string]any{{"maximum_event_age_in_seconds": int(awssdk.ToInt32(rp.MaximumEventAgeInSeconds)),
			"maximum_retry_attempts": int(awssdk.ToInt32(rp.MaximumRetryAttempts))}}
	}
	if d := tg.DeadLetterConfig; d != nil { // flattenTargetDeadLetterConfig
		st["dead_letter_config"] = []map[string]any{{"arn": awssdk.ToString(d.Arn)}}
	}
	return st, nil
}

// tfConnParams is connection.go flattenConnectionHTTPParameters for one list: a value the API does not answer (a
// secret) is the one at the same index in what the provider holds (d.GetOk of "<path>.<i>.value").
func tfConnParams(keys []string, values []*string, secret []bool, prior []map[string]any) []map[string]any {
	var out []map[string]any
	for i, k := range keys {
		p := map[string]any{"key": k, "is_value_secret": secret[i]}
		if values[i] != nil {
			p["value"] = *values[i]
		} else if i < len(prior) && prior[i]["value"] != nil {
			p["value"] = prior[i]["value"]
		}
		out = append(out, p)
	}
	return out
}

// tfBlock is the first element of a block of st ("" path steps are list indexes 0), or nil.
func tfBlock(st tfState, path ...string) map[string]any {
	cur := map[string]any(st)
	for _, p := range path {
		l, _ := cur[p].([]map[string]any)
		if len(l) == 0 {
			return nil
		}
		cur = l[0]
	}
	return cur
}

// tfReadConnection is connection.go resourceConnectionRead: findConnectionByName (DescribeConnection), and
// flattenConnectionAuthParameters, which takes the secrets the API does not answer (the API key's value, secret
// parameters' values) from what the provider holds: prior, the configuration on create and update, the state after.
func tfReadConnection(ctx context.Context, eb *eventbridge.Client, name string, prior tfState) (tfState, error) {
	out, err := eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: &name})
	if err != nil {
		return nil, err
	}
	st := tfState{"arn": awssdk.ToString(out.ConnectionArn), "authorization_type": string(out.AuthorizationType),
		"description": awssdk.ToString(out.Description), "name": awssdk.ToString(out.Name), "secret_arn": awssdk.ToString(out.SecretArn)}
	ap := out.AuthParameters
	if ap == nil {
		return st, nil
	}
	auth := map[string]any{}
	if k := ap.ApiKeyAuthParameters; k != nil { // flattenConnectionAPIKeyAuthParameters
		key := map[string]any{"key": awssdk.ToString(k.ApiKeyName)}
		if v := tfBlock(prior, "auth_parameters", "api_key"); v != nil && v["value"] != nil {
			key["value"] = v["value"]
		}
		auth["api_key"] = []map[string]any{key}
	}
	if b := ap.BasicAuthParameters; b != nil { // flattenConnectionBasicAuthParameters
		basic := map[string]any{"username": awssdk.ToString(b.Username)}
		if v := tfBlock(prior, "auth_parameters", "basic"); v != nil && v["password"] != nil {
			basic["password"] = v["password"]
		}
		auth["basic"] = []map[string]any{basic}
	}
	if h := ap.InvocationHttpParameters; h != nil {
		pr := tfBlock(prior, "auth_parameters", "invocation_http_parameters")
		priorList := func(k string) []map[string]any {
			if pr == nil {
				return nil
			}
			l, _ := pr[k].([]map[string]any)
			return l
		}
		var hk, qk, bk []string
		var hv, qv, bv []*string
		var hs, qs, bs []bool
		for _, p := range h.HeaderParameters {
			hk, hv, hs = append(hk, awssdk.ToString(p.Key)), append(hv, p.Value), append(hs, p.IsValueSecret)
		}
		for _, p := range h.QueryStringParameters {
			qk, qv, qs = append(qk, awssdk.ToString(p.Key)), append(qv, p.Value), append(qs, p.IsValueSecret)
		}
		for _, p := range h.BodyParameters {
			bk, bv, bs = append(bk, awssdk.ToString(p.Key)), append(bv, p.Value), append(bs, p.IsValueSecret)
		}
		auth["invocation_http_parameters"] = []map[string]any{{
			"header":       tfConnParams(hk, hv, hs, priorList("header")),
			"query_string": tfConnParams(qk, qv, qs, priorList("query_string")),
			"body":         tfConnParams(bk, bv, bs, priorList("body")),
		}}
	}
	st["auth_parameters"] = []map[string]any{auth}
	return st, nil
}

// tfReadAPIDestination is api_destination.go resourceAPIDestinationRead (findAPIDestinationByName:
// DescribeApiDestination by the resource id, its name).
func tfReadAPIDestination(ctx context.Context, eb *eventbridge.Client, name string) (tfState, error) {
	out, err := eb.DescribeApiDestination(ctx, &eventbridge.DescribeApiDestinationInput{Name: &name})
	if err != nil {
		return nil, err
	}
	return tfState{"arn": awssdk.ToString(out.ApiDestinationArn), "connection_arn": awssdk.ToString(out.ConnectionArn),
		"description": awssdk.ToString(out.Description), "http_method": string(out.HttpMethod),
		"invocation_endpoint": awssdk.ToString(out.InvocationEndpoint), "name": awssdk.ToString(out.Name),
		"invocation_rate_limit_per_second": int(awssdk.ToInt32(out.InvocationRateLimitPerSecond))}, nil
}

// tfReadArchive is archive.go resourceArchiveRead (findArchiveByName: DescribeArchive by the resource id, its name);
// event_pattern is kept as answered (the StateFunc applies to the configuration only).
func tfReadArchive(ctx context.Context, eb *eventbridge.Client, name string) (tfState, error) {
	out, err := eb.DescribeArchive(ctx, &eventbridge.DescribeArchiveInput{ArchiveName: &name})
	if err != nil {
		return nil, err
	}
	return tfState{"arn": awssdk.ToString(out.ArchiveArn), "description": awssdk.ToString(out.Description),
		"event_pattern": awssdk.ToString(out.EventPattern), "event_source_arn": awssdk.ToString(out.EventSourceArn),
		"name": awssdk.ToString(out.ArchiveName), "retention_days": int(awssdk.ToInt32(out.RetentionDays))}, nil
}

// TestTerraformCallSequence replays with aws-sdk-go-v2 the calls terraform-provider-aws makes for
// aws_cloudwatch_event_bus, _rule, _target, _connection, _api_destination and _archive: `terraform apply` (create,
// read after create with its retries and its tag reads), a second plan (a refresh compared with the configuration),
// an update of each where simple, and `terraform destroy` in the provider's order with its retries. Where what
// the provider reads back differs from what it wrote, the test asserts this API's current behaviour and says so:
// those are perpetual diffs (docs/aws-api.md, Terraform).
func TestTerraformCallSequence(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m).newAccount("tfseq")
	eb := awsClient(m, a.newAWSKey("terraform", "admin"), "us-east-1")
	ctx := context.Background()
	rcv := newAWSReceiver(t)
	number := account.AWSAccountID("tfseq")
	roleARN := "arn:aws:iam::" + number + ":role/tf-invoke"

	const (
		busName  = "tf-orders"
		ruleName = "big-orders"
		connName = "tf-receiver"
		destName = "tf-receiver"
		archName = "tf-orders-archive"
	)
	// The pattern as an HCL heredoc or jsonencode() gives it: the provider sends it through its StateFunc.
	const pattern = `{
  "source": ["shop"],
  "detail-type": ["OrderPlaced"],
  "detail": {"total": [{"numeric": [">", 100]}]}
}`
	const pattern2 = `{"source": ["shop"], "detail-type": ["OrderPlaced", "OrderUpdated"], "detail": {"total": [{"numeric": [">=", 100]}]}}`

	// The configuration, as the provider compares it after a refresh.
	busCfg := tfState{"name": busName, "description": "orders of the shop", "kms_key_identifier": "",
		"dead_letter_config": nil, "log_config": nil, "tags": map[string]string{"team": "shop", "env": "test"}}
	connAuth := func(apiKey, signature string) []map[string]any {
		return []map[string]any{{
			"api_key": []map[string]any{{"key": "X-Api-Key", "value": apiKey}},
			"invocation_http_parameters": []map[string]any{{
				"header": []map[string]any{
					{"key": "X-Tenant", "value": "acme", "is_value_secret": false},
					{"key": "X-Signature", "value": signature, "is_value_secret": true},
				},
				"query_string": []map[string]any{{"key": "via", "value": "terraform", "is_value_secret": false}},
			}},
		}}
	}
	connCfg := tfState{"name": connName, "description": "the receiver", "authorization_type": "API_KEY",
		"auth_parameters": connAuth("secret-1", "sig-1")}
	destCfg := tfState{"name": destName, "description": "orders to the receiver", "http_method": "POST",
		"invocation_endpoint": rcv.srv.URL + "/orders", "invocation_rate_limit_per_second": 300} // connection_arn below
	ruleCfg := tfState{"name": ruleName, "event_bus_name": busName, "description": "orders over 100",
		"event_pattern": tfRuleEventPattern(pattern), "role_arn": "", "schedule_expression": "",
		"tags": map[string]string{"team": "shop", "env": "test"}}
	targetCfg := tfState{"rule": ruleName, "event_bus_name": busName, "role_arn": roleARN, "input": "", "input_path": "",
		"http_target": nil, "input_transformer": nil, "retry_policy": nil, "dead_letter_config": nil} // arn, target_id below
	archCfg := tfState{"name": archName, "description": "big orders", "event_pattern": tfNormalizeJSON(pattern),
		"retention_days": 0} // event_source_arn below

	var busState, connState, destState, ruleState, targetState, archState tfState
	var targetID string
	var busARN, connARN, destARN string

	// target.go resourceTargetCreate and resourceTargetUpdate: expandPutTargetsInput, one target, its Id the
	// target_id (not the resource id), then putTargetsError over FailedEntries.
	putTarget := func(t *testing.T, retry *types.RetryPolicy) {
		out, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String(ruleName), EventBusName: awssdk.String(busName),
			Targets: []types.Target{{Id: &targetID, Arn: &destARN, RoleArn: &roleARN, RetryPolicy: retry}}})
		require.NoError(t, err)
		require.Empty(t, out.FailedEntries)
	}

	if !t.Run("apply", func(t *testing.T) {
		// bus.go resourceBusCreate: CreateEventBus with Name, Description and the tags (getTagsIn; tag-on-create),
		// the resource id is the name; then resourceBusRead and the tags interceptor's ListTags.
		out, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String(busName),
			Description: awssdk.String(busCfg["description"].(string)), Tags: tfTags(busCfg["tags"].(map[string]string))})
		require.NoError(t, err)
		busARN = awssdk.ToString(out.EventBusArn)
		busState, err = tfReadBus(ctx, eb, busName)
		require.NoError(t, err)
		assert.Equal(t, busARN, busState["arn"])
		assert.Empty(t, tfPlanDiff(busCfg, busState), "the bus reads back as written")

		// connection.go resourceConnectionCreate: CreateConnection (expandCreateConnectionAuthRequestParameters: the
		// API key, the invocation parameters with their values and IsValueSecret), the id is the name; then
		// waitConnectionCreated (DescribeConnection while CREATING or AUTHORIZING, or not found yet, until AUTHORIZED
		// or DEAUTHORIZED) and resourceConnectionRead.
		_, err = eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String(connName),
			Description: awssdk.String(connCfg["description"].(string)), AuthorizationType: types.ConnectionAuthorizationTypeApiKey,
			AuthParameters: &types.CreateConnectionAuthRequestParameters{
				ApiKeyAuthParameters: &types.CreateConnectionApiKeyAuthRequestParameters{ApiKeyName: awssdk.String("X-Api-Key"), ApiKeyValue: awssdk.String("secret-1")},
				InvocationHttpParameters: &types.ConnectionHttpParameters{
					HeaderParameters: []types.ConnectionHeaderParameter{
						{Key: awssdk.String("X-Tenant"), Value: awssdk.String("acme")},
						{Key: awssdk.String("X-Signature"), Value: awssdk.String("sig-1"), IsValueSecret: true},
					},
					QueryStringParameters: []types.ConnectionQueryStringParameter{{Key: awssdk.String("via"), Value: awssdk.String("terraform")}},
				},
			}})
		require.NoError(t, err)
		tries, err := tfWaitConnection(ctx, eb, connName, []string{"CREATING", "AUTHORIZING"}, []string{"AUTHORIZED", "DEAUTHORIZED"})
		require.NoError(t, err)
		assert.Equal(t, 1, tries, "AUTHORIZED from its creation")
		connState, err = tfReadConnection(ctx, eb, connName, connCfg)
		require.NoError(t, err)
		connARN = connState["arn"].(string)
		assert.Empty(t, tfPlanDiff(connCfg, connState), "the connection reads back as written, secrets from the state")

		// api_destination.go resourceAPIDestinationCreate: CreateApiDestination with ConnectionArn (the
		// connection's arn attribute), HttpMethod, Name, Description, InvocationEndpoint and
		// InvocationRateLimitPerSecond (the schema's default, 300, is sent); then resourceAPIDestinationRead.
		destCfg["connection_arn"] = connARN
		_, err = eb.CreateApiDestination(ctx, &eventbridge.CreateApiDestinationInput{Name: awssdk.String(destName),
			ConnectionArn: &connARN, HttpMethod: types.ApiDestinationHttpMethodPost, Description: awssdk.String(destCfg["description"].(string)),
			InvocationEndpoint: awssdk.String(destCfg["invocation_endpoint"].(string)), InvocationRateLimitPerSecond: awssdk.Int32(300)})
		require.NoError(t, err)
		destState, err = tfReadAPIDestination(ctx, eb, destName)
		require.NoError(t, err)
		destARN = destState["arn"].(string)
		assert.Empty(t, tfPlanDiff(destCfg, destState), "the API destination reads back as written, its connection's ARN too")

		// rule.go resourceRuleCreate: expandPutRuleInput (Name, EventBusName, Description, EventPattern through
		// ruleEventPatternJSONDecoder; State only when configured) with the tags, by retryPutRule (which retries a
		// ValidationException "cannot be assumed by principal", for a role_arn); the id is "<bus>/<rule>"
		// (ruleCreateResourceID); then RetryWhenNotFound over findRuleByTwoPartKey (DescribeRule), resourceRuleRead
		// and the tags interceptor's ListTags.
		rout, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String(ruleName), EventBusName: awssdk.String(busName),
			Description: awssdk.String(ruleCfg["description"].(string)), EventPattern: awssdk.String(tfRuleEventPattern(pattern)),
			Tags: tfTags(ruleCfg["tags"].(map[string]string))})
		require.NoError(t, err)
		tries, err = tfRetryWhenNotFound(func() error {
			_, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: awssdk.String(ruleName), EventBusName: awssdk.String(busName)})
			return err
		})
		require.NoError(t, err)
		assert.Equal(t, 1, tries, "the rule is found at once")
		ruleState, err = tfReadRule(ctx, eb, busName, ruleName)
		require.NoError(t, err)
		assert.Equal(t, awssdk.ToString(rout.RuleArn), ruleState["arn"])
		assert.Equal(t, "ENABLED", ruleState["state"])
		assert.Empty(t, tfPlanDiff(ruleCfg, ruleState), "the rule reads back as written, its pattern equal once normalized")

		// archive.go resourceArchiveCreate: CreateArchive with ArchiveName, EventSourceArn (the bus's arn),
		// Description, EventPattern through structure.NormalizeJsonString (so ">" is sent as "\u003e"),
		// RetentionDays only when set; the id is the name; then resourceArchiveRead.
		archCfg["event_source_arn"] = busARN
		_, err = eb.CreateArchive(ctx, &eventbridge.CreateArchiveInput{ArchiveName: awssdk.String(archName), EventSourceArn: &busARN,
			Description: awssdk.String(archCfg["description"].(string)), EventPattern: awssdk.String(tfNormalizeJSON(pattern))})
		require.NoError(t, err)
		archState, err = tfReadArchive(ctx, eb, archName)
		require.NoError(t, err)
		assert.Contains(t, tfNormalizeJSON(pattern), `\u003e`, "what the provider sends")
		assert.Empty(t, tfPlanDiff(archCfg, archState), "the archive answers its pattern as the provider sent it")

		// target.go resourceTargetCreate: no target_id in the configuration, so id.UniqueId(); the resource id is
		// "<bus>-<rule>-<target_id>" (targetCreateResourceID; never sent), the API's Id is target_id alone; then
		// resourceTargetRead (findTargetByThreePartKey).
		targetID = tfUniqueID(1)
		require.Regexp(t, `^terraform-[0-9]{18}[0-9a-f]{8}$`, targetID)
		targetCfg["arn"], targetCfg["target_id"] = destARN, targetID
		putTarget(t, nil)
		targetState, err = tfReadTarget(ctx, eb, busName, ruleName, targetID)
		require.NoError(t, err)
		assert.Equal(t, destARN, targetState["arn"], "the API destination's ARN, with its id, as written")
		assert.Equal(t, targetID, targetState["target_id"], "the API's Id is target_id, not "+busName+"-"+ruleName+"-"+targetID)
		// The role_arn of the target is kept and read back (it grants nothing here), so the plan has no diff. A
		// target put without a RetryPolicy reads back without one, as AWS answers it (flattenTargetRetryPolicy
		// leaves retry_policy empty).
		assert.Empty(t, tfPlanDiff(targetCfg, targetState))
		assert.Equal(t, targetCfg["role_arn"], targetState["role_arn"])
		assert.Nil(t, targetState["retry_policy"])

		// What Terraform made works: an event on the bus reaches the receiver through the API destination.
		pe, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{EventBusName: awssdk.String(busName),
			Source: awssdk.String("shop"), DetailType: awssdk.String("OrderPlaced"), Detail: awssdk.String(`{"orderId": 1, "total": 150}`)}}})
		require.NoError(t, err)
		require.Zero(t, pe.FailedEntryCount)
		require.Eventually(t, func() bool { return len(rcv.received("/orders")) == 1 }, 15*time.Second, 50*time.Millisecond)
		var env struct {
			DetailType string         `json:"detail-type"`
			Detail     map[string]any `json:"detail"`
		}
		require.NoError(t, json.Unmarshal([]byte(rcv.received("/orders")[0]), &env))
		assert.Equal(t, "OrderPlaced", env.DetailType)
		assert.Equal(t, map[string]any{"orderId": 1.0, "total": 150.0}, env.Detail)
	}) {
		t.FailNow()
	}

	// A second `terraform plan`: a refresh (each resource's read, not new, so not found would drop it from the
	// state) compared with the configuration.
	refresh := func(t *testing.T) {
		var err error
		busState, err = tfReadBus(ctx, eb, busName)
		require.NoError(t, err)
		connState, err = tfReadConnection(ctx, eb, connName, connState)
		require.NoError(t, err)
		destState, err = tfReadAPIDestination(ctx, eb, destName)
		require.NoError(t, err)
		ruleState, err = tfReadRule(ctx, eb, busName, ruleName)
		require.NoError(t, err)
		archState, err = tfReadArchive(ctx, eb, archName)
		require.NoError(t, err)
		targetState, err = tfReadTarget(ctx, eb, busName, ruleName, targetID)
		require.NoError(t, err)
	}
	if !t.Run("plan", func(t *testing.T) {
		refresh(t)
		assert.Empty(t, tfPlanDiff(busCfg, busState))
		assert.Empty(t, tfPlanDiff(connCfg, connState))
		assert.Empty(t, tfPlanDiff(destCfg, destState))
		assert.Empty(t, tfPlanDiff(ruleCfg, ruleState))
		assert.Empty(t, tfPlanDiff(archCfg, archState))
		assert.Empty(t, tfPlanDiff(targetCfg, targetState))
	}) {
		t.FailNow()
	}

	if !t.Run("update", func(t *testing.T) {
		// bus: description removed, tags changed. The tags interceptor first (Before Update: UpdateTags on the
		// bus's ARN), then bus.go resourceBusUpdate: UpdateEventBus with Name and Description "" (the provider's way
		// of unsetting it), then the read.
		newTags := map[string]string{"team": "shop", "cost": "42"}
		require.NoError(t, tfUpdateTags(ctx, eb, busARN, busCfg["tags"].(map[string]string), newTags))
		busCfg["description"], busCfg["tags"] = "", newTags
		_, err := eb.UpdateEventBus(ctx, &eventbridge.UpdateEventBusInput{Name: awssdk.String(busName), Description: awssdk.String("")})
		require.NoError(t, err)
		busState, err = tfReadBus(ctx, eb, busName)
		require.NoError(t, err)
		assert.Empty(t, tfPlanDiff(busCfg, busState), "description cleared, tags replaced")

		// connection: description and secrets changed. connection.go resourceConnectionUpdate: UpdateConnection
		// with Name, AuthorizationType, every auth parameter of the configuration (secrets included) and
		// Description; waitConnectionUpdated; the read.
		connCfg["description"], connCfg["auth_parameters"] = "the receiver, v2", connAuth("secret-2", "sig-2")
		_, err = eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String(connName),
			Description: awssdk.String("the receiver, v2"), AuthorizationType: types.ConnectionAuthorizationTypeApiKey,
			AuthParameters: &types.UpdateConnectionAuthRequestParameters{
				ApiKeyAuthParameters: &types.UpdateConnectionApiKeyAuthRequestParameters{ApiKeyName: awssdk.String("X-Api-Key"), ApiKeyValue: awssdk.String("secret-2")},
				InvocationHttpParameters: &types.ConnectionHttpParameters{
					HeaderParameters: []types.ConnectionHeaderParameter{
						{Key: awssdk.String("X-Tenant"), Value: awssdk.String("acme")},
						{Key: awssdk.String("X-Signature"), Value: awssdk.String("sig-2"), IsValueSecret: true},
					},
					QueryStringParameters: []types.ConnectionQueryStringParameter{{Key: awssdk.String("via"), Value: awssdk.String("terraform")}},
				},
			}})
		require.NoError(t, err)
		_, err = tfWaitConnection(ctx, eb, connName, []string{"UPDATING", "AUTHORIZING", "DEAUTHORIZING"}, []string{"AUTHORIZED", "DEAUTHORIZED"})
		require.NoError(t, err)
		connState, err = tfReadConnection(ctx, eb, connName, connCfg)
		require.NoError(t, err)
		assert.Empty(t, tfPlanDiff(connCfg, connState))

		// API destination: rate and description changed. api_destination.go resourceAPIDestinationUpdate:
		// UpdateApiDestination with every attribute, then the read.
		destCfg["description"], destCfg["invocation_rate_limit_per_second"] = "orders, slower", 20
		_, err = eb.UpdateApiDestination(ctx, &eventbridge.UpdateApiDestinationInput{Name: awssdk.String(destName), ConnectionArn: &connARN,
			HttpMethod: types.ApiDestinationHttpMethodPost, Description: awssdk.String("orders, slower"),
			InvocationEndpoint: awssdk.String(destCfg["invocation_endpoint"].(string)), InvocationRateLimitPerSecond: awssdk.Int32(20)})
		require.NoError(t, err)
		destState, err = tfReadAPIDestination(ctx, eb, destName)
		require.NoError(t, err)
		assert.Empty(t, tfPlanDiff(destCfg, destState))

		// rule: pattern and tags changed, description removed. The tags interceptor's UpdateTags on the rule's ARN,
		// then rule.go resourceRuleUpdate: expandPutRuleInput (no Description when none is configured) with the
		// tags ("for ABAC"), by retryPutRule; then the read.
		newRuleTags := map[string]string{"team": "orders", "tier": "gold"}
		ruleARN := ruleState["arn"].(string)
		require.NoError(t, tfUpdateTags(ctx, eb, ruleARN, ruleCfg["tags"].(map[string]string), newRuleTags))
		ruleCfg["description"], ruleCfg["tags"], ruleCfg["event_pattern"] = "", newRuleTags, tfRuleEventPattern(pattern2)
		_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String(ruleName), EventBusName: awssdk.String(busName),
			EventPattern: awssdk.String(tfRuleEventPattern(pattern2)), Tags: tfTags(newRuleTags)})
		require.NoError(t, err)
		ruleState, err = tfReadRule(ctx, eb, busName, ruleName)
		require.NoError(t, err)
		// PutRule without Description clears it, as AWS replaces what PutRule omits with null: the removed
		// description converges.
		assert.Empty(t, tfPlanDiff(ruleCfg, ruleState))
		assert.Equal(t, "", ruleState["description"])
		assert.Equal(t, tfRuleEventPattern(pattern2), ruleState["event_pattern"])
		assert.Equal(t, newRuleTags, ruleState["tags"])

		// archive: description, pattern and retention changed. archive.go resourceArchiveUpdate: UpdateArchive with
		// ArchiveName, Description, EventPattern (normalized) and RetentionDays; then the read.
		archCfg["description"], archCfg["event_pattern"], archCfg["retention_days"] = "big orders, a week", tfNormalizeJSON(pattern2), 7
		_, err = eb.UpdateArchive(ctx, &eventbridge.UpdateArchiveInput{ArchiveName: awssdk.String(archName),
			Description: awssdk.String("big orders, a week"), EventPattern: awssdk.String(tfNormalizeJSON(pattern2)), RetentionDays: awssdk.Int32(7)})
		require.NoError(t, err)
		archState, err = tfReadArchive(ctx, eb, archName)
		require.NoError(t, err)
		assert.Empty(t, tfPlanDiff(archCfg, archState))

		// target: retry_policy written. target.go resourceTargetUpdate: PutTargets with the whole target, then the
		// read. A configured retry policy reads back as written, role_arn too.
		targetCfg["retry_policy"] = []map[string]any{{"maximum_event_age_in_seconds": 3600, "maximum_retry_attempts": 3}}
		putTarget(t, &types.RetryPolicy{MaximumEventAgeInSeconds: awssdk.Int32(3600), MaximumRetryAttempts: awssdk.Int32(3)})
		targetState, err = tfReadTarget(ctx, eb, busName, ruleName, targetID)
		require.NoError(t, err)
		assert.Empty(t, tfPlanDiff(targetCfg, targetState))

		// The plan after this apply: the same, and nothing else.
		refresh(t)
		assert.Empty(t, tfPlanDiff(busCfg, busState))
		assert.Empty(t, tfPlanDiff(connCfg, connState))
		assert.Empty(t, tfPlanDiff(destCfg, destState))
		assert.Empty(t, tfPlanDiff(ruleCfg, ruleState))
		assert.Empty(t, tfPlanDiff(archCfg, archState))
		assert.Empty(t, tfPlanDiff(targetCfg, targetState))
	}) {
		t.FailNow()
	}

	t.Run("bus log_config", func(t *testing.T) {
		// A bus with log_config (bus.go resourceBusCreate sends LogConfig) is the bus log of /api/v1, and
		// DescribeEventBus answers it (flattenLogConfig): no change on the next plan.
		_, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("tf-logged"),
			LogConfig: &types.LogConfig{Level: types.LevelInfo, IncludeDetail: types.IncludeDetailFull}})
		require.NoError(t, err)
		st, err := tfReadBus(ctx, eb, "tf-logged")
		require.NoError(t, err)
		cfg := tfState{"name": "tf-logged", "description": "", "kms_key_identifier": "", "dead_letter_config": nil, "tags": nil,
			"log_config": []map[string]any{{"include_detail": "FULL", "level": "INFO"}}}
		assert.Empty(t, tfPlanDiff(cfg, st))
		_, err = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String("tf-logged")})
		require.NoError(t, err)
	})

	t.Run("destroy", func(t *testing.T) {
		// Terraform destroys dependents first: the target (it names the rule and the API destination), then the
		// rule, the API destination and the archive, then the connection and the bus.

		// target.go resourceTargetDelete: RemoveTargets with Ids [target_id], Rule, EventBusName, Force false;
		// removeTargetsError over FailedEntries; ResourceNotFoundException is success.
		removeTarget := func() error {
			out, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: awssdk.String(ruleName),
				EventBusName: awssdk.String(busName), Ids: []string{targetID}})
			if err == nil && len(out.FailedEntries) > 0 {
				return fmt.Errorf("%s: %s", awssdk.ToString(out.FailedEntries[0].ErrorCode), awssdk.ToString(out.FailedEntries[0].ErrorMessage))
			}
			if apiErrorCode(err) == "ResourceNotFoundException" {
				return nil
			}
			return err
		}

		// rule.go resourceRuleDelete: DeleteRule with Name, EventBusName and Force (force_destroy, false), retried
		// by RetryWhenAWSErrMessageContains while it answers ValidationException "Rule can't be deleted since it
		// has targets" (errors.go errCodeValidationException); ResourceNotFoundException is success. On AWS the
		// target's removal may not be visible yet when DeleteRule runs, which is what the loop is for; here the
		// first DeleteRule runs while the target still exists and the target's delete (the step before) lands
		// between two tries, so that the loop is exercised.
		var refusals []string
		tries, err := tfRetryWhenMessageContains(func() error {
			_, err := eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String(ruleName), EventBusName: awssdk.String(busName)})
			if apiErrorCode(err) == "ResourceNotFoundException" {
				return nil
			}
			return err
		}, "ValidationException", "Rule can't be deleted since it has targets", func(err error) {
			var ae smithy.APIError
			require.ErrorAs(t, err, &ae)
			refusals = append(refusals, ae.ErrorMessage())
			if len(refusals) == 1 {
				require.NoError(t, removeTarget())
			}
		})
		require.NoError(t, err)
		assert.Equal(t, 2, tries)
		assert.Equal(t, []string{"Rule can't be deleted since it has targets."}, refusals)
		_, err = tfReadTarget(ctx, eb, busName, ruleName, targetID)
		assert.True(t, tfTargetNotFound(err), "the target is gone with its rule: %v", err)
		require.NoError(t, removeTarget(), "a target deleted already is success")

		// api_destination.go resourceAPIDestinationDelete: DeleteApiDestination; ResourceNotFoundException is
		// success.
		_, err = eb.DeleteApiDestination(ctx, &eventbridge.DeleteApiDestinationInput{Name: awssdk.String(destName)})
		require.NoError(t, err)

		// archive.go resourceArchiveDelete: DeleteArchive by the id; ResourceNotFoundException is success.
		_, err = eb.DeleteArchive(ctx, &eventbridge.DeleteArchiveInput{ArchiveName: awssdk.String(archName)})
		require.NoError(t, err)

		// connection.go resourceConnectionDelete: DeleteConnection, then waitConnectionDeleted (DescribeConnection
		// while DELETING, until not found).
		dc, err := eb.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String(connName)})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateDeleting, dc.ConnectionState)
		_, err = tfWaitConnection(ctx, eb, connName, []string{"DELETING"}, nil)
		require.NoError(t, err)

		// bus.go resourceBusDelete: DeleteEventBus by the id, last; ResourceNotFoundException is success.
		_, err = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String(busName)})
		require.NoError(t, err)

		// Everything is gone, as the provider's reads see it (not found: removed from the state), and a second
		// destroy of each is success as the provider takes it.
		_, err = tfReadBus(ctx, eb, busName)
		assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), "bus")
		_, err = tfReadRule(ctx, eb, busName, ruleName)
		assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), "rule")
		_, err = tfReadTarget(ctx, eb, busName, ruleName, targetID)
		assert.True(t, tfTargetNotFound(err), "target: %v", err)
		_, err = tfReadConnection(ctx, eb, connName, nil)
		assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), "connection")
		_, err = tfReadAPIDestination(ctx, eb, destName)
		assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), "API destination")
		_, err = tfReadArchive(ctx, eb, archName)
		assert.Equal(t, "ResourceNotFoundException", apiErrorCode(err), "archive")
		l, err := eb.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{NamePrefix: awssdk.String("tf-")})
		require.NoError(t, err)
		assert.Empty(t, l.EventBuses)

		assert.NoError(t, removeTarget())
		_, err = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String(ruleName), EventBusName: awssdk.String(busName)})
		assert.True(t, err == nil || apiErrorCode(err) == "ResourceNotFoundException", "rule: %v", err)
		_, err = eb.DeleteApiDestination(ctx, &eventbridge.DeleteApiDestinationInput{Name: awssdk.String(destName)})
		assert.True(t, err == nil || apiErrorCode(err) == "ResourceNotFoundException", "API destination: %v", err)
		_, err = eb.DeleteArchive(ctx, &eventbridge.DeleteArchiveInput{ArchiveName: awssdk.String(archName)})
		assert.True(t, err == nil || apiErrorCode(err) == "ResourceNotFoundException", "archive: %v", err)
		_, err = eb.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String(connName)})
		assert.True(t, err == nil || apiErrorCode(err) == "ResourceNotFoundException", "connection: %v", err)
		_, err = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String(busName)})
		assert.True(t, err == nil || apiErrorCode(err) == "ResourceNotFoundException", "bus: %v", err)
	})
}
