package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/account"
)

// awsKey is an access key of an account, as POST /api/v1/access-keys answers it.
type awsKey struct {
	ID     string `json:"accessKeyId"`
	Secret string `json:"secretAccessKey"`
}

// newAWSKey creates an access key of a's account with the role.
func (a api) newAWSKey(name, role string) awsKey {
	a.t.Helper()
	var k awsKey
	require.NoError(a.t, json.Unmarshal(a.must("POST", "/api/v1/access-keys", map[string]any{"name": name, "role": role}, 201), &k))
	require.NotEmpty(a.t, k.Secret)
	return k
}

// awsClient is the AWS SDK's EventBridge client pointed at m with the key, retries off (a test sees every answer).
func awsClient(m *Main, k awsKey, region string) *eventbridge.Client {
	return eventbridge.New(eventbridge.Options{
		Region:           region,
		BaseEndpoint:     awssdk.String("http://" + m.HTTPAddr()),
		Credentials:      credentials.NewStaticCredentialsProvider(k.ID, k.Secret, ""),
		RetryMaxAttempts: 1,
	})
}

// apiErrorCode is the AWS error code of err ("" when err is not an API error).
func apiErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// awsReceiver records the bodies an http target of the AWS API delivers, by path; it fails what is sent to /fail.
type awsReceiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies map[string][]string // by path
}

func newAWSReceiver(t *testing.T) *awsReceiver {
	r := &awsReceiver{bodies: map[string][]string{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies[req.URL.Path] = append(r.bodies[req.URL.Path], string(b))
		r.mu.Unlock()
		if req.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *awsReceiver) received(path string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.bodies[path]...)
}

// TestAWSAPI drives the Amazon EventBridge API with AWS's own Go SDK against the real control plane: every
// operation of part 1 with its success and main errors, events put through the AWS API and through CloudEvents
// PutEvents reaching a target, and the failures of Signature Version 4.
func TestAWSAPI(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	admin := apiOf(t, m)
	a := admin.newAccount("awsa")
	key := a.newAWSKey("sdk", "admin")
	eb := awsClient(m, key, "us-east-1")
	ctx := context.Background()
	number := account.AWSAccountID("awsa")
	require.Regexp(t, `^[0-9]{12}$`, number)

	t.Run("buses", func(t *testing.T) {
		out, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("orders"), Description: awssdk.String("the orders")})
		require.NoError(t, err)
		assert.Equal(t, "arn:aws:events:us-east-1:"+number+":event-bus/orders", awssdk.ToString(out.EventBusArn))
		_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("orders")})
		var exists *types.ResourceAlreadyExistsException
		require.ErrorAs(t, err, &exists)
		assert.Contains(t, exists.ErrorMessage(), "orders already exists")

		d, err := eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: out.EventBusArn})
		require.NoError(t, err)
		assert.Equal(t, "orders", awssdk.ToString(d.Name))
		assert.Equal(t, "the orders", awssdk.ToString(d.Description))
		assert.WithinDuration(t, time.Now(), awssdk.ToTime(d.CreationTime), time.Minute)
		def, err := eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{})
		require.NoError(t, err)
		assert.Equal(t, "default", awssdk.ToString(def.Name), "no name is the default bus, which every account has")
		a.must("GET", "/api/v1/buses/default", nil, 200)
		_, err = eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: awssdk.String("nope")})
		var nf *types.ResourceNotFoundException
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Event bus nope does not exist.", nf.ErrorMessage())
		_, err = eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: awssdk.String("arn:aws:events:us-east-1:111111111111:event-bus/orders")})
		require.ErrorAs(t, err, &nf, "another account's ARN is a bus that does not exist")

		u, err := eb.UpdateEventBus(ctx, &eventbridge.UpdateEventBusInput{Name: awssdk.String("orders"), Description: awssdk.String("changed")})
		require.NoError(t, err)
		assert.Equal(t, "changed", awssdk.ToString(u.Description))

		for _, n := range []string{"b1", "b2", "b3"} {
			_, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String(n)})
			require.NoError(t, err)
		}
		var names []string
		in := &eventbridge.ListEventBusesInput{NamePrefix: awssdk.String("b"), Limit: awssdk.Int32(2)}
		for pages := 0; ; pages++ {
			require.Less(t, pages, 3)
			l, err := eb.ListEventBuses(ctx, in)
			require.NoError(t, err)
			for _, b := range l.EventBuses {
				names = append(names, awssdk.ToString(b.Name))
			}
			if l.NextToken == nil {
				break
			}
			in.NextToken = l.NextToken
		}
		assert.Equal(t, []string{"b1", "b2", "b3"}, names)
		_, err = eb.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{NextToken: awssdk.String("x")})
		assert.Equal(t, "ValidationException", apiErrorCode(err))

		for _, n := range []string{"b1", "b2", "b3", "b3"} { // a bus that does not exist is deleted already
			_, err := eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String(n)})
			require.NoError(t, err)
		}
		_, err = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String("default")})
		assert.Equal(t, "ValidationException", apiErrorCode(err))
		_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("encrypted"),
			KmsKeyIdentifier: awssdk.String("arn:aws:kms:us-east-1:" + number + ":key/1")})
		assert.Equal(t, "ValidationException", apiErrorCode(err), "what is not supported is refused, never ignored")
	})

	const pattern = `{
  "source": ["shop"],
  "detail-type": ["OrderPlaced"],
  "detail": {"total": [{"numeric": [">", 100]}]}
}`
	rcv := newAWSReceiver(t)
	t.Run("rules and targets", func(t *testing.T) {
		out, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("big-orders"), EventBusName: awssdk.String("orders"),
			EventPattern: awssdk.String(pattern), Description: awssdk.String("orders over 100")})
		require.NoError(t, err)
		assert.Equal(t, "arn:aws:events:us-east-1:"+number+":rule/orders/big-orders", awssdk.ToString(out.RuleArn))
		d, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: awssdk.String("big-orders"), EventBusName: awssdk.String("orders")})
		require.NoError(t, err)
		assert.Equal(t, pattern, awssdk.ToString(d.EventPattern), "the pattern reads back exactly as written")
		assert.Equal(t, types.RuleStateEnabled, d.State)
		assert.Equal(t, "orders over 100", awssdk.ToString(d.Description))
		assert.Equal(t, number, awssdk.ToString(d.CreatedBy))

		_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("bad"), EventBusName: awssdk.String("orders"),
			EventPattern: awssdk.String(`{"source": "shop"}`)})
		var ip *types.InvalidEventPatternException
		require.ErrorAs(t, err, &ip, "a value that is not an array")
		_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("r"), EventBusName: awssdk.String("nope"),
			EventPattern: awssdk.String(pattern)})
		var nf *types.ResourceNotFoundException
		require.ErrorAs(t, err, &nf)
		_, err = eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: awssdk.String("nope"), EventBusName: awssdk.String("orders")})
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Rule nope does not exist on EventBus orders.", nf.ErrorMessage())

		_, err = eb.DisableRule(ctx, &eventbridge.DisableRuleInput{Name: awssdk.String("big-orders"), EventBusName: awssdk.String("orders")})
		require.NoError(t, err)
		l, err := eb.ListRules(ctx, &eventbridge.ListRulesInput{EventBusName: awssdk.String("orders")})
		require.NoError(t, err)
		require.Len(t, l.Rules, 1)
		assert.Equal(t, types.RuleStateDisabled, l.Rules[0].State)
		_, err = eb.EnableRule(ctx, &eventbridge.EnableRuleInput{Name: awssdk.String("big-orders"), EventBusName: awssdk.String("orders")})
		require.NoError(t, err)

		httpARN := "arn:aws:eventbridge-go:us-east-1:" + number + ":http/" + rcv.srv.URL + "/orders"
		rawARN := "arn:aws:eventbridge-go:us-east-1:" + number + ":http/" + rcv.srv.URL + "/raw"
		pt, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String("big-orders"), EventBusName: awssdk.String("orders"),
			Targets: []types.Target{
				{Id: awssdk.String("hook"), Arn: awssdk.String(httpARN), InputTransformer: &types.InputTransformer{
					InputPathsMap: map[string]string{"id": "$.detail.orderId", "kind": "$.detail-type"},
					InputTemplate: awssdk.String(`{"order": <id>, "kind": <kind>, "rule": <aws.events.rule-name>}`)}},
				{Id: awssdk.String("raw"), Arn: awssdk.String(rawARN)},
				{Id: awssdk.String("sqs"), Arn: awssdk.String("arn:aws:sqs:us-east-1:" + number + ":q")},
			}})
		require.NoError(t, err)
		assert.Equal(t, int32(1), pt.FailedEntryCount)
		require.Len(t, pt.FailedEntries, 1)
		assert.Equal(t, "sqs", awssdk.ToString(pt.FailedEntries[0].TargetId))
		assert.Equal(t, "ValidationException", awssdk.ToString(pt.FailedEntries[0].ErrorCode))

		lt, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: awssdk.String("big-orders"), EventBusName: awssdk.String("orders")})
		require.NoError(t, err)
		require.Len(t, lt.Targets, 2)
		got := lt.Targets[0]
		assert.Equal(t, httpARN, awssdk.ToString(got.Arn))
		assert.Equal(t, map[string]string{"id": "$.detail.orderId", "kind": "$.detail-type"}, got.InputTransformer.InputPathsMap,
			"paths read back as written")
		assert.Nil(t, got.RetryPolicy, "the default policy reads back as none, as AWS answers a target that set none")

		names, err := eb.ListRuleNamesByTarget(ctx, &eventbridge.ListRuleNamesByTargetInput{TargetArn: awssdk.String(httpARN),
			EventBusName: awssdk.String("orders")})
		require.NoError(t, err)
		assert.Equal(t, []string{"big-orders"}, names.RuleNames)

		_, err = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String("big-orders"), EventBusName: awssdk.String("orders")})
		assert.Equal(t, "ValidationException", apiErrorCode(err))
		assert.Contains(t, err.Error(), "Rule can't be deleted since it has targets.")
	})

	t.Run("events from both APIs", func(t *testing.T) {
		pe, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
			{EventBusName: awssdk.String("orders"), Source: awssdk.String("shop"), DetailType: awssdk.String("OrderPlaced"),
				Detail: awssdk.String(`{"orderId": 1, "total": 150}`)},
			{EventBusName: awssdk.String("arn:aws:events:us-east-1:" + number + ":event-bus/orders"), Source: awssdk.String("shop"),
				DetailType: awssdk.String("OrderPlaced"), Detail: awssdk.String(`{"orderId": 2, "total": 50}`)},
			{EventBusName: awssdk.String("orders"), Source: awssdk.String("shop"), DetailType: awssdk.String("OrderPlaced"),
				Detail: awssdk.String(`not json`)},
			{EventBusName: awssdk.String("nope"), Source: awssdk.String("shop"), DetailType: awssdk.String("OrderPlaced"),
				Detail: awssdk.String(`{}`)},
		}})
		require.NoError(t, err)
		assert.Equal(t, int32(2), pe.FailedEntryCount, "%+v", awsEntries(pe.Entries))
		require.Len(t, pe.Entries, 4)
		assert.NotEmpty(t, awssdk.ToString(pe.Entries[0].EventId))
		assert.NotEmpty(t, awssdk.ToString(pe.Entries[1].EventId))
		assert.Equal(t, "MalformedDetail", awssdk.ToString(pe.Entries[2].ErrorCode))
		assert.Equal(t, "ResourceNotFoundException", awssdk.ToString(pe.Entries[3].ErrorCode))

		// The same pattern matches a CloudEvent put through /api/v1: detail-type is its type, detail its data.
		a.putBatch("orders", []map[string]any{
			{"specversion": "1.0", "id": "ce-1", "source": "shop", "type": "OrderPlaced", "data": map[string]any{"orderId": 3, "total": 300}},
			{"specversion": "1.0", "id": "ce-2", "source": "shop", "type": "OrderPlaced", "data": map[string]any{"orderId": 4, "total": 3}},
		})
		require.Eventually(t, func() bool { return len(rcv.received("/orders")) >= 2 && len(rcv.received("/raw")) >= 2 },
			30*time.Second, 50*time.Millisecond)
		time.Sleep(300 * time.Millisecond) // nothing else arrives
		assert.ElementsMatch(t, []string{`{"order": 1, "kind": "OrderPlaced", "rule": "big-orders"}`,
			`{"order": 3, "kind": "OrderPlaced", "rule": "big-orders"}`}, rcv.received("/orders"))
		// Without a transformer, a target of the AWS API receives AWS's envelope, whichever API put the event.
		raw := rcv.received("/raw")
		require.Len(t, raw, 2)
		byOrder := map[float64]map[string]any{}
		for _, b := range raw {
			var env map[string]any
			require.NoError(t, json.Unmarshal([]byte(b), &env), b)
			byOrder[env["detail"].(map[string]any)["orderId"].(float64)] = env
		}
		put, ce := byOrder[1], byOrder[3]
		require.NotNil(t, put, "%v", raw)
		require.NotNil(t, ce, "%v", raw)
		assert.Equal(t, awssdk.ToString(pe.Entries[0].EventId), put["id"])
		for _, env := range []map[string]any{put, ce} {
			assert.Equal(t, "0", env["version"])
			assert.Equal(t, "OrderPlaced", env["detail-type"])
			assert.Equal(t, "shop", env["source"])
			assert.Equal(t, number, env["account"])
			assert.Equal(t, "us-east-1", env["region"])
			assert.Equal(t, []any{}, env["resources"])
		}
		assert.Equal(t, "ce-1", ce["id"])

		_, err = eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, 11)})
		assert.Equal(t, "ValidationException", apiErrorCode(err))
	})

	t.Run("test event pattern", func(t *testing.T) {
		ev := `{"id": "1", "account": "` + number + `", "source": "shop", "time": "2026-12-03T10:00:00Z", "region": "us-east-1",
			"resources": ["arn:a", "arn:b"], "detail-type": "OrderPlaced", "detail": {"total": 150}}`
		for p, want := range map[string]bool{
			pattern:                                  true,
			`{"resources": ["arn:b"]}`:               true,
			`{"detail": {"total": [100]}}`:           false,
			`{"detail-type": [{"prefix": "Order"}]}`: true,
		} {
			out, err := eb.TestEventPattern(ctx, &eventbridge.TestEventPatternInput{EventPattern: awssdk.String(p), Event: awssdk.String(ev)})
			require.NoError(t, err, p)
			assert.Equal(t, want, out.Result, p)
		}
		_, err := eb.TestEventPattern(ctx, &eventbridge.TestEventPatternInput{EventPattern: awssdk.String(`{"source": "x"}`), Event: awssdk.String(ev)})
		var ip *types.InvalidEventPatternException
		require.ErrorAs(t, err, &ip)
	})

	t.Run("clean up", func(t *testing.T) {
		rt, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: awssdk.String("big-orders"), EventBusName: awssdk.String("orders"),
			Ids: []string{"hook", "raw", "never-was"}})
		require.NoError(t, err)
		assert.Zero(t, rt.FailedEntryCount)
		for range 2 { // the second time, it is gone already
			_, err = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String("big-orders"), EventBusName: awssdk.String("orders")})
			require.NoError(t, err)
		}
		_, err = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String("orders")})
		require.NoError(t, err)
	})

	t.Run("names with dots and slashes", func(t *testing.T) {
		const busName, ruleName = "org.shop/orders", "created.v1"
		out, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String(busName)})
		require.NoError(t, err)
		busARN := awssdk.ToString(out.EventBusArn)
		assert.Equal(t, "arn:aws:events:us-east-1:"+number+":event-bus/"+busName, busARN)
		_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String(ruleName), EventBusName: out.EventBusArn,
			EventPattern: awssdk.String(`{"detail-type": ["created"]}`)})
		require.NoError(t, err)
		ok, fail := rcv.srv.URL+"/dots", rcv.srv.URL+"/fail"
		pt, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String(ruleName), EventBusName: awssdk.String(busName),
			Targets: []types.Target{
				{Id: awssdk.String("hook.1"), Arn: awssdk.String("arn:aws:eventbridge-go:us-east-1:" + number + ":http/" + ok),
					InputPath: awssdk.String("$.detail")},
				{Id: awssdk.String("fail.1"), Arn: awssdk.String("arn:aws:eventbridge-go:us-east-1:" + number + ":http/" + fail),
					RetryPolicy: &types.RetryPolicy{MaximumRetryAttempts: awssdk.Int32(0)}},
			}})
		require.NoError(t, err)
		require.Zero(t, pt.FailedEntryCount, "%+v", pt.FailedEntries)

		// /api/v1 takes the same names, the slash escaped in paths.
		const v1 = "/api/v1/buses/org.shop%2Forders"
		a.must("GET", v1+"/rules/created.v1/targets/hook.1", nil, 200)
		a.putBatch("org.shop%2Forders", []map[string]any{
			{"specversion": "1.0", "id": "dots-1", "source": "shop", "type": "created", "data": map[string]any{"n": 1}}})
		_, err = eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{EventBusName: awssdk.String(busARN),
			Source: awssdk.String("shop"), DetailType: awssdk.String("created"), Detail: awssdk.String(`{"n": 2}`)}}})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return len(rcv.received("/dots")) == 2 }, 30*time.Second, 50*time.Millisecond)
		assert.ElementsMatch(t, []string{`{"n":1}`, `{"n":2}`}, rcv.received("/dots"))

		// The failing target's dead letters name the bus, the rule and the target as they are.
		var dl struct {
			DeadLetters []struct{ Bus, Rule, Target string } `json:"deadLetters"`
		}
		require.Eventually(t, func() bool {
			require.NoError(t, json.Unmarshal(a.must("GET", "/api/v1/dead-letters?bus=org.shop%2Forders", nil, 200), &dl))
			return len(dl.DeadLetters) == 2
		}, 30*time.Second, 100*time.Millisecond)
		for _, d := range dl.DeadLetters {
			assert.Equal(t, []string{busName, ruleName, "fail.1"}, []string{d.Bus, d.Rule, d.Target})
		}
	})

	t.Run("API destination and bus targets by their ARNs", func(t *testing.T) {
		a.must("POST", "/api/v1/connections", map[string]any{"name": "rcv", "authorizationType": "API_KEY",
			"authParameters": map[string]any{"apiKeyAuthParameters": map[string]any{"apiKeyName": "X-Api-Key", "apiKeyValue": "k-1"}}}, 201)
		a.must("POST", "/api/v1/api-destinations", map[string]any{"name": "orders-api", "connection": "rcv",
			"invocationEndpoint": rcv.srv.URL + "/dest/*", "httpMethod": "POST"}, 201)
		for _, n := range []string{"fwd-in", "fwd-out"} {
			_, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String(n)})
			require.NoError(t, err)
		}
		_, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("all"), EventBusName: awssdk.String("fwd-in"),
			EventPattern: awssdk.String(`{"source": ["fwd"]}`)})
		require.NoError(t, err)
		_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("all"), EventBusName: awssdk.String("fwd-out"),
			EventPattern: awssdk.String(`{"source": ["fwd"]}`)})
		require.NoError(t, err)
		pt, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String("all"), EventBusName: awssdk.String("fwd-in"),
			Targets: []types.Target{{Id: awssdk.String("to-bus"), Arn: awssdk.String("arn:aws:events:us-east-1:" + number + ":event-bus/fwd-out")}}})
		require.NoError(t, err)
		require.Zero(t, pt.FailedEntryCount, "%+v", pt.FailedEntries)
		pt, err = eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String("all"), EventBusName: awssdk.String("fwd-out"),
			Targets: []types.Target{{Id: awssdk.String("to-api"),
				Arn:            awssdk.String("arn:aws:events:us-east-1:" + number + ":api-destination/orders-api/0b6e2e8a-1d0c-4d3a-9f0e-7a1b2c3d4e5f"),
				HttpParameters: &types.HttpParameters{PathParameterValues: []string{"$.detail.id"}}}}})
		require.NoError(t, err)
		require.Zero(t, pt.FailedEntryCount, "%+v", pt.FailedEntries)
		lt, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: awssdk.String("all"), EventBusName: awssdk.String("fwd-out")})
		require.NoError(t, err)
		require.Len(t, lt.Targets, 1)
		assert.Equal(t, []string{"$.detail.id"}, lt.Targets[0].HttpParameters.PathParameterValues)

		_, err = eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{{EventBusName: awssdk.String("fwd-in"),
			Source: awssdk.String("fwd"), DetailType: awssdk.String("t"), Detail: awssdk.String(`{"id": "o-7"}`)}}})
		require.NoError(t, err)
		if !assert.Eventually(t, func() bool { return len(rcv.received("/dest/o-7")) == 1 }, 30*time.Second, 50*time.Millisecond,
			"forwarded by the bus target, then delivered by the API destination to its endpoint with the path parameter") {
			rcv.mu.Lock()
			t.Logf("received: %v", rcv.bodies)
			rcv.mu.Unlock()
			t.Logf("dead letters: %s", a.must("GET", "/api/v1/dead-letters", nil, 200))
			t.Logf("targets: %s", a.must("GET", "/api/v1/buses/fwd-out/rules/all/targets", nil, 200))
			t.Logf("targets: %s", a.must("GET", "/api/v1/buses/fwd-in/rules/all/targets", nil, 200))
			t.FailNow()
		}
		var env map[string]any
		require.NoError(t, json.Unmarshal([]byte(rcv.received("/dest/o-7")[0]), &env))
		assert.Equal(t, map[string]any{"id": "o-7"}, env["detail"], "in AWS's envelope")
	})

	t.Run("isolation and roles", func(t *testing.T) {
		b := admin.newAccount("awsb")
		b.must("POST", "/api/v1/buses", map[string]any{"name": "secret"}, 201)
		_, err := eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: awssdk.String("secret")})
		var nf *types.ResourceNotFoundException
		require.ErrorAs(t, err, &nf, "another account's bus does not exist for this key")
		reader := awsClient(m, a.newAWSKey("viewer", "viewer"), "us-east-1")
		_, err = reader.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
		require.NoError(t, err)
		_, err = reader.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("x")})
		assert.Equal(t, "AccessDeniedException", apiErrorCode(err))
	})

	t.Run("signature version 4", func(t *testing.T) {
		wrong := awsClient(m, awsKey{ID: key.ID, Secret: strings.Repeat("x", 40)}, "us-east-1")
		_, err := wrong.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
		assert.Equal(t, "InvalidSignatureException", apiErrorCode(err))
		unknown := awsClient(m, awsKey{ID: "AKIAAAAAAAAAAAAAAAAA", Secret: key.Secret}, "us-east-1")
		_, err = unknown.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
		assert.Equal(t, "UnrecognizedClientException", apiErrorCode(err))
		otherRegion := awsClient(m, key, "eu-west-1")
		_, err = otherRegion.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
		assert.Equal(t, "InvalidSignatureException", apiErrorCode(err))

		// A request signed 20 minutes ago is refused.
		body := `{}`
		req, err := http.NewRequest(http.MethodPost, "http://"+m.HTTPAddr()+"/", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", "AWSEvents.ListEventBuses")
		const emptyHash = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
		require.NoError(t, v4.NewSigner().SignHTTP(ctx, awssdk.Credentials{AccessKeyID: key.ID, SecretAccessKey: key.Secret},
			req, emptyHash, "events", "us-east-1", time.Now().Add(-20*time.Minute)))
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, string(out), `"__type":"InvalidSignatureException"`)
		assert.Contains(t, string(out), "Signature expired")

		// A revoked key stops working within the cache's lifetime.
		k := a.newAWSKey("short", "admin")
		c := awsClient(m, k, "us-east-1")
		_, err = c.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
		require.NoError(t, err)
		a.must("DELETE", "/api/v1/access-keys/"+k.ID, nil, 204)
		require.Eventually(t, func() bool {
			_, err := c.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
			return apiErrorCode(err) == "UnrecognizedClientException"
		}, 5*time.Second, 100*time.Millisecond)
	})
}

// awsEntries is what PutEvents answered, readable in a failure message.
func awsEntries(es []types.PutEventsResultEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = awssdk.ToString(e.EventId) + awssdk.ToString(e.ErrorCode) + " " + awssdk.ToString(e.ErrorMessage)
	}
	return out
}
