package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// awsEnv is the environment of AWS's clients run against m with the key: its credentials and region, and nothing
// of the machine's own AWS configuration. Its config file turns off the aws CLI 1's fetching of parameters that
// look like URLs (an API destination's endpoint would be fetched instead of sent; the CLI 2 never fetches).
func awsEnv(t *testing.T, k awsKey) []string {
	config := t.TempDir() + "/aws-config"
	require.NoError(t, os.WriteFile(config, []byte("[default]\ncli_follow_urlparam = false\n"), 0o600))
	env := []string{"AWS_ACCESS_KEY_ID=" + k.ID, "AWS_SECRET_ACCESS_KEY=" + k.Secret, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + config, "AWS_SHARED_CREDENTIALS_FILE=/nonexistent", "AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER="}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	return env
}

// bodyRecorder records the bodies an endpoint receives, with the API key header they came with.
type bodyRecorder struct {
	srv    *httptest.Server
	mu     sync.Mutex
	bodies []string
	keys   []string
}

func newBodyRecorder(t *testing.T) *bodyRecorder {
	r := &bodyRecorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.bodies = append(r.bodies, string(b))
		r.keys = append(r.keys, req.Header.Get("X-Api-Key"))
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *bodyRecorder) received() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string{}, r.bodies...), append([]string{}, r.keys...)
}

// TestAWSCLIWalkthrough runs docs/aws-api.md's walk-through with AWS's own command-line client (the aws CLI, which
// .ci/run installs): a bus, a connection and an API destination to a local receiver, a rule with an AWS pattern
// and the destination as its target, an archive; events put, the matching one delivered in AWS's envelope with the
// connection's key; replayed from the archive; everything deleted again.
func TestAWSCLIWalkthrough(t *testing.T) {
	awsCLI, err := exec.LookPath("aws")
	require.NoError(t, err, "the aws CLI is needed (.ci/run installs the Debian package awscli)")
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m).newAccount("cli")
	env := awsEnv(t, a.newAWSKey("cli", "admin"))
	rcv := newBodyRecorder(t)
	run := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command(awsCLI, append([]string{"--endpoint-url", "http://" + m.HTTPAddr(), "--output", "json", "events"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoErrorf(t, err, "aws events %s: %s", strings.Join(args, " "), out)
		var v map[string]any
		if len(strings.TrimSpace(string(out))) > 0 {
			require.NoErrorf(t, json.Unmarshal(out, &v), "aws events %s: %s", args[0], out)
		}
		return v
	}

	bus := run("create-event-bus", "--name", "orders")["EventBusArn"].(string)
	conn := run("create-connection", "--name", "receiver", "--authorization-type", "API_KEY", "--auth-parameters",
		`{"ApiKeyAuthParameters": {"ApiKeyName": "X-Api-Key", "ApiKeyValue": "cli-secret-1"}}`)["ConnectionArn"].(string)
	dest := run("create-api-destination", "--name", "receiver", "--connection-arn", conn, "--invocation-endpoint",
		rcv.srv.URL+"/orders", "--http-method", "POST")["ApiDestinationArn"].(string)
	run("put-rule", "--name", "big", "--event-bus-name", "orders", "--event-pattern",
		`{"source": [{"prefix": "shop"}], "detail": {"total": [{"numeric": [">", 100]}]}}`)
	targets := run("put-targets", "--rule", "big", "--event-bus-name", "orders", "--targets", `[{"Id": "receiver", "Arn": "`+dest+`"}]`)
	assert.EqualValues(t, 0, targets["FailedEntryCount"])
	archive := run("create-archive", "--archive-name", "orders-all", "--event-source-arn", bus)["ArchiveArn"].(string)

	from := time.Now().Add(-time.Second).UTC()
	put := run("put-events", "--entries", `[
		{"EventBusName": "orders", "Source": "shop.web", "DetailType": "OrderPlaced", "Detail": "{\"orderId\": 1, \"total\": 150}"},
		{"EventBusName": "orders", "Source": "shop.web", "DetailType": "OrderPlaced", "Detail": "{\"orderId\": 2, \"total\": 5}"}]`)
	assert.EqualValues(t, 0, put["FailedEntryCount"], "%v", put)
	require.Eventually(t, func() bool { b, _ := rcv.received(); return len(b) == 1 }, 30*time.Second, 50*time.Millisecond)
	bodies, keys := rcv.received()
	var env0 map[string]any
	require.NoError(t, json.Unmarshal([]byte(bodies[0]), &env0), bodies[0])
	assert.Equal(t, "OrderPlaced", env0["detail-type"])
	assert.Equal(t, map[string]any{"orderId": float64(1), "total": float64(150)}, env0["detail"])
	assert.Equal(t, "cli-secret-1", keys[0], "with the connection's API key")

	// Both events are in the archive; a replay of the window puts them on the bus again, and the rule matches one.
	time.Sleep(1100 * time.Millisecond)
	to := time.Now().UTC()
	run("start-replay", "--replay-name", "again", "--event-source-arn", archive, "--event-start-time", from.Format(time.RFC3339),
		"--event-end-time", to.Format(time.RFC3339), "--destination", `{"Arn": "`+bus+`"}`)
	require.Eventually(t, func() bool { return run("describe-replay", "--replay-name", "again")["State"] == "COMPLETED" },
		60*time.Second, 500*time.Millisecond)
	require.Eventually(t, func() bool { b, _ := rcv.received(); return len(b) == 2 }, 30*time.Second, 50*time.Millisecond)
	bodies, _ = rcv.received()
	assert.Contains(t, bodies[1], `"orderId":1`)

	rules := run("list-rules", "--event-bus-name", "orders")["Rules"].([]any)
	require.Len(t, rules, 1)
	assert.Equal(t, "big", rules[0].(map[string]any)["Name"])
	run("remove-targets", "--rule", "big", "--event-bus-name", "orders", "--ids", "receiver")
	run("delete-rule", "--name", "big", "--event-bus-name", "orders")
	run("delete-archive", "--archive-name", "orders-all")
	run("delete-api-destination", "--name", "receiver")
	run("delete-connection", "--name", "receiver")
	run("delete-event-bus", "--name", "orders")
	a.must("GET", "/api/v1/buses/orders", nil, 404)
}

// TestBoto3Walkthrough drives the same API with boto3 (AWS's Python SDK, which .ci/run installs): a bus, a rule,
// an event matched by TestEventPattern and put, the rule listed, everything deleted again.
func TestBoto3Walkthrough(t *testing.T) {
	python := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(p, "-c", "import boto3").Run() == nil {
			python = p
			break
		}
	}
	require.NotEmpty(t, python, "boto3 is needed (.ci/run installs the Debian package python3-boto3)")
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m).newAccount("boto")
	const script = `
import json, os, sys, boto3
eb = boto3.client("events", endpoint_url=os.environ["EB_ENDPOINT"])
out = {}
out["bus"] = eb.create_event_bus(Name="orders.py")["EventBusArn"]
pattern = json.dumps({"source": ["shop"], "detail-type": ["OrderPlaced"]})
out["rule"] = eb.put_rule(Name="placed", EventBusName="orders.py", EventPattern=pattern)["RuleArn"]
event = json.dumps({"id": "1", "account": "123456789012", "source": "shop", "time": "2026-12-03T10:00:00Z",
                    "region": "us-east-1", "resources": [], "detail-type": "OrderPlaced", "detail": {}})
out["match"] = eb.test_event_pattern(EventPattern=pattern, Event=event)["Result"]
put = eb.put_events(Entries=[{"EventBusName": "orders.py", "Source": "shop", "DetailType": "OrderPlaced", "Detail": "{}"}])
out["failed"] = put["FailedEntryCount"]
out["rules"] = [r["Name"] for r in eb.list_rules(EventBusName="orders.py")["Rules"]]
out["described"] = eb.describe_rule(Name="placed", EventBusName="orders.py")["EventPattern"]
try:
    eb.describe_event_bus(Name="nope")
except eb.exceptions.ResourceNotFoundException as e:
    out["missing"] = e.response["Error"]["Code"]
eb.delete_rule(Name="placed", EventBusName="orders.py")
eb.delete_event_bus(Name="orders.py")
print(json.dumps(out))
`
	cmd := exec.Command(python, "-c", script)
	cmd.Env = append(awsEnv(t, a.newAWSKey("boto", "admin")), "EB_ENDPOINT=http://"+m.HTTPAddr())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var got struct {
		Bus, Rule, Described, Missing string
		Match                         bool
		Failed                        int
		Rules                         []string
	}
	require.NoError(t, json.Unmarshal(out, &got), "%s", out)
	assert.True(t, strings.HasSuffix(got.Bus, ":event-bus/orders.py"), got.Bus)
	assert.True(t, strings.HasSuffix(got.Rule, ":rule/orders.py/placed"), got.Rule)
	assert.True(t, got.Match)
	assert.Zero(t, got.Failed)
	assert.Equal(t, []string{"placed"}, got.Rules)
	assert.JSONEq(t, `{"source": ["shop"], "detail-type": ["OrderPlaced"]}`, got.Described)
	assert.Equal(t, "ResourceNotFoundException", got.Missing)
	a.must("GET", "/api/v1/buses/orders.py", nil, 404)
}
