package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oapi-codegen/oapi-codegen/v2/pkg/securityprovider"

	"github.com/eventbridge-go/eventbridge/docs/client"
	"github.com/eventbridge-go/eventbridge/listener/listenertest"
)

// receiver is the README's printer: an HTTP server that records the ce-id of every event it is sent.
type receiver struct {
	mu  sync.Mutex
	ids []string
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.URL.Path == "/hook" {
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("ce-id"))
		r.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := slices.Clone(r.ids)
	slices.Sort(ids)
	return ids
}

// startEventBridge builds bin/eventbridge as `make build` does (with -race when the test has it) and runs it on free loopback ports with a fresh data
// directory, as `make run` does (private targets allowed); it returns the API's base URL once /readyz answers 200,
// and the instance administrator's API key that the first start wrote to <data-dir>/admin-api-key.
func startEventBridge(t *testing.T) (base, key, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "eventbridge")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, "github.com/eventbridge-go/eventbridge/cmd/eventbridge")...).CombinedOutput()
	require.NoError(t, err, string(out))

	addr := listenertest.Addr(t)
	data := filepath.Join(dir, "data")
	cmd := exec.Command(bin, "--http-addr", addr, "--worker-addr", listenertest.Addr(t), "--data-dir", data,
		"--allow-private-targets", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })

	base = "http://" + addr
	require.Eventually(t, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond, "eventbridge did not become ready")
	// export EB_API_KEY=$(cat data/admin-api-key)
	b, err := os.ReadFile(filepath.Join(data, "admin-api-key"))
	require.NoError(t, err)
	info, err := os.Stat(filepath.Join(data, "admin-api-key"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the key file is its owner's only")
	return base, strings.TrimSpace(string(b)), data
}

// privateFiles lists the files and directories under dir that others than their owner may read or enter. The
// process is running: a file it renames or removes between the listing of its directory and its reading (a
// consumer's state written to a .tmp file, then renamed) is skipped.
func privateFiles(t *testing.T, dir string) (open []string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if d.IsDir() {
			want = 0o700
		}
		if info.Mode().Perm() != want {
			open = append(open, fmt.Sprintf("%s %s", path, info.Mode().Perm()))
		}
		return nil
	}))
	return open
}

func ptr[T any](v T) *T { return &v }

// TestReadmeWalkthrough runs README.md's "Walk-through with curl" against the real binary, only through the client
// that oapi-codegen generated from the committed spec: if the spec misstated a path, a parameter, a body or an
// answer, a call here would fail or decode nothing.
func TestReadmeWalkthrough(t *testing.T) {
	t.Parallel()
	printer := &receiver{}
	hook := httptest.NewServer(printer)
	t.Cleanup(hook.Close)

	base, key, data := startEventBridge(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)

	// Without the key, nothing: 401 with a Bearer challenge.
	anonymous, err := client.NewClientWithResponses(base)
	require.NoError(t, err)
	denied, err := anonymous.GetApiV1BusesWithResponse(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, denied.StatusCode(), string(denied.Body))
	require.NotNil(t, denied.JSON401, string(denied.Body))
	assert.Equal(t, "Unauthenticated", *denied.JSON401.Code)
	assert.Equal(t, `Bearer realm="eventbridge"`, denied.HTTPResponse.Header.Get("WWW-Authenticate"))

	// Every call sends Authorization: Bearer $EB_API_KEY (the spec's BearerAuth scheme).
	bearer, err := securityprovider.NewSecurityProviderBearerToken(key)
	require.NoError(t, err)
	eb, err := client.NewClientWithResponses(base, client.WithRequestEditorFn(bearer.Intercept))
	require.NoError(t, err)
	me, err := eb.GetApiV1MeWithResponse(ctx)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, me.StatusCode(), string(me.Body))
	require.NotNil(t, me.JSON200)
	assert.True(t, *me.JSON200.InstanceAdmin)
	assert.Equal(t, "default", *me.JSON200.Account)

	// 1. A bus
	bus, err := eb.PostApiV1BusesWithResponse(ctx, nil, client.Bus{Name: ptr("orders"), Description: ptr("shop orders")})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, bus.StatusCode(), string(bus.Body))
	require.NotNil(t, bus.JSON201)
	assert.Equal(t, "orders", *bus.JSON201.Name)
	assert.Equal(t, "shop orders", *bus.JSON201.Description)

	// 2. A rule with an event pattern: orders created by any shop source
	pattern := map[string]any{"type": []any{"order.created"}, "source": []any{map[string]any{"prefix": "shop"}}}
	rule, err := eb.PostApiV1BusesBusRulesWithResponse(ctx, "orders", nil,
		client.Rule{Name: ptr("created"), EventPattern: &pattern})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, rule.StatusCode(), string(rule.Body))
	require.NotNil(t, rule.JSON201)
	assert.Equal(t, "created", *rule.JSON201.Name)
	assert.Equal(t, client.RuleState("ENABLED"), *rule.JSON201.State)

	// 3. An HTTP target for the rule
	target, err := eb.PutApiV1BusesBusRulesRuleTargetsTargetWithResponse(ctx, "orders", "created", "printer", nil,
		client.Target{Type: ptr(client.TargetType("http")), Config: &client.TargetConfig{Url: ptr(hook.URL + "/hook")}})
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, target.StatusCode(), string(target.Body))
	require.NotNil(t, target.JSON201)
	assert.Equal(t, "printer", *target.JSON201.Name)
	assert.Equal(t, hook.URL+"/hook", *target.JSON201.Config.Url)

	// 4. Events. Binary mode (attributes in ce-* headers): this one matches ...
	binary, err := eb.PostApiV1BusesBusEventsWithBodyWithResponse(ctx, "orders", &client.PostApiV1BusesBusEventsParams{
		CeSpecversion: ptr("1.0"), CeId: ptr("1"), CeSource: ptr("shop.web"), CeType: ptr("order.created"),
	}, "application/json", strings.NewReader(`{"orderId": 42, "amount": 120}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, binary.StatusCode(), string(binary.Body))
	require.NotNil(t, binary.JSON200)
	assert.Equal(t, 0, *binary.JSON200.FailedEntryCount)
	require.Len(t, *binary.JSON200.Entries, 1)
	assert.NotEmpty(t, *(*binary.JSON200.Entries)[0].EventId)

	// ... structured mode: this one does not (wrong type) ...
	structured, err := eb.PostApiV1BusesBusEventsWithApplicationCloudeventsPlusJSONBodyWithResponse(ctx, "orders", nil,
		client.CloudEvent{Specversion: ptr("1.0"), Id: ptr("2"), Source: ptr("shop.web"), Type: ptr("order.cancelled"),
			Data: &map[string]any{"orderId": 42}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, structured.StatusCode(), string(structured.Body))
	require.NotNil(t, structured.JSON200)
	assert.Equal(t, 0, *structured.JSON200.FailedEntryCount)

	// ... and a batch: entries are stored one by one, the answer lists an eventId or an error per entry. The spec
	// can give one body schema only (a CloudEvent), so the batch, an array of them, goes through the raw-body method.
	batch, err := json.Marshal([]client.CloudEvent{
		{Specversion: ptr("1.0"), Id: ptr("3"), Source: ptr("shop.app"), Type: ptr("order.created"), Data: &map[string]any{"orderId": 43}},
		{Specversion: ptr("1.0"), Id: ptr("4"), Source: ptr("crm"), Type: ptr("order.created"), Data: &map[string]any{"orderId": 44}},
		{Specversion: ptr("1.0"), Id: ptr("5"), Type: ptr("order.created")},
	})
	require.NoError(t, err)
	batched, err := eb.PostApiV1BusesBusEventsWithBodyWithResponse(ctx, "orders", nil,
		"application/cloudevents-batch+json", strings.NewReader(string(batch)))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, batched.StatusCode(), string(batched.Body))
	require.NotNil(t, batched.JSON200)
	assert.Equal(t, 1, *batched.JSON200.FailedEntryCount)
	entries := *batched.JSON200.Entries
	require.Len(t, entries, 3)
	assert.NotNil(t, entries[0].EventId)
	assert.Nil(t, entries[0].ErrorCode)
	assert.NotNil(t, entries[1].EventId)
	require.NotNil(t, entries[2].ErrorCode, string(batched.Body))
	assert.Equal(t, "InvalidEvent", *entries[2].ErrorCode)

	// The receiver gets events 1 and 3: 2 has another type, 4 another source, and 5 was refused.
	require.Eventually(t, func() bool { return len(printer.received()) >= 2 }, 30*time.Second, 20*time.Millisecond,
		"the target received %v", printer.received())

	// What happened to my event: tested against every rule of the bus, and searched among what the bus stored.
	tested, err := eb.PostApiV1BusesBusTestEventWithResponse(ctx, "orders", nil, client.TestBusEventInput{Event: &map[string]any{
		"specversion": "1.0", "id": "t1", "source": "shop.web", "type": "order.paid", "data": map[string]any{"orderId": 1}}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, tested.StatusCode(), string(tested.Body))
	require.NotNil(t, tested.JSON200)
	assert.Equal(t, 0, *tested.JSON200.MatchedCount)
	require.Len(t, *tested.JSON200.Rules, 1)
	verdict := (*tested.JSON200.Rules)[0]
	assert.Equal(t, "created", *verdict.Rule)
	require.NotNil(t, verdict.Explanation, string(tested.Body))
	assert.Equal(t, "type", *verdict.Explanation.Path)
	found, err := eb.GetApiV1BusesBusEventsWithResponse(ctx, "orders", &client.GetApiV1BusesBusEventsParams{
		Type: ptr("order.created"), Limit: ptr(10)})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, found.StatusCode(), string(found.Body))
	require.NotNil(t, found.JSON200)
	var foundIDs []string
	for _, ev := range *found.JSON200.Events {
		foundIDs = append(foundIDs, fmt.Sprint((*ev.Event)["id"]))
	}
	assert.Equal(t, []string{"1", "3", "4"}, foundIDs, "the bus stored every valid event, matching or not")

	// More to try: the target with its runtime status ...
	got, err := eb.GetApiV1BusesBusRulesRuleTargetsTargetWithResponse(ctx, "orders", "created", "printer", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, got.StatusCode(), string(got.Body))
	require.NotNil(t, got.JSON200)
	assert.Equal(t, client.TargetType("http"), *got.JSON200.Type)
	require.NotNil(t, got.JSON200.Status, string(got.Body))
	assert.NotEmpty(t, *got.JSON200.Status.State)

	// ... the rule read back ...
	readRule, err := eb.GetApiV1BusesBusRulesRuleWithResponse(ctx, "orders", "created", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, readRule.StatusCode(), string(readRule.Body))
	require.NotNil(t, readRule.JSON200)
	assert.Equal(t, pattern, *readRule.JSON200.EventPattern)

	// ... a disabled rule delivers nothing, an enabled one again ...
	disabled, err := eb.PostApiV1BusesBusRulesRuleDisableWithResponse(ctx, "orders", "created", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, disabled.StatusCode(), string(disabled.Body))
	require.NotNil(t, disabled.JSON200)
	assert.Equal(t, client.RuleState("DISABLED"), *disabled.JSON200.State)
	putMatching := func(id string) {
		t.Helper()
		res, err := eb.PostApiV1BusesBusEventsWithApplicationCloudeventsPlusJSONBodyWithResponse(ctx, "orders", nil,
			client.CloudEvent{Specversion: ptr("1.0"), Id: ptr(id), Source: ptr("shop.web"), Type: ptr("order.created")})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, res.StatusCode(), string(res.Body))
	}
	putMatching("6")
	enabled, err := eb.PostApiV1BusesBusRulesRuleEnableWithResponse(ctx, "orders", "created", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, enabled.StatusCode(), string(enabled.Body))
	putMatching("7")
	require.Eventually(t, func() bool { return slices.Contains(printer.received(), "7") }, 30*time.Second,
		20*time.Millisecond, "the target received %v", printer.received())
	assert.Equal(t, []string{"1", "3", "7"}, printer.received(), "only events matching an enabled rule are delivered")

	// The bus log: switched on, it records what the router matched and every attempt of the target.
	level := client.LogConfigLevel("INFO")
	logged, err := eb.PatchApiV1BusesBusWithResponse(ctx, "orders", nil, client.BusPatch{LogConfig: &client.LogConfig{Level: &level}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, logged.StatusCode(), string(logged.Body))
	logEvent, err := eb.PostApiV1BusesBusEventsWithApplicationCloudeventsPlusJSONBodyWithResponse(ctx, "orders", nil,
		client.CloudEvent{Specversion: ptr("1.0"), Id: ptr("8"), Source: ptr("shop.web"), Type: ptr("order.created")})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, logEvent.StatusCode(), string(logEvent.Body))
	var steps []string
	require.Eventually(t, func() bool {
		page, err := eb.GetApiV1BusesBusLogWithResponse(ctx, "orders", &client.GetApiV1BusesBusLogParams{EventId: ptr("8")})
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, page.StatusCode(), string(page.Body))
		steps = steps[:0]
		for _, r := range *page.JSON200.Records {
			steps = append(steps, *r.Type)
		}
		return len(steps) == 3
	}, 30*time.Second, 50*time.Millisecond, "the log of event 8: %v", steps)
	// The router's two records are in order; the target's may come before the match (docs/events.md).
	assert.ElementsMatch(t, []string{"EVENT_RECEIPT", "RULE_MATCH", "INVOCATION_ATTEMPT_SUCCESS"}, steps)
	assert.Less(t, slices.Index(steps, "EVENT_RECEIPT"), slices.Index(steps, "RULE_MATCH"), "%v", steps)

	// ... lists are paged ...
	list, err := eb.GetApiV1BusesWithResponse(ctx, &client.GetApiV1BusesParams{Limit: ptr(10)})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, list.StatusCode(), string(list.Body))
	require.NotNil(t, list.JSON200)
	require.Len(t, *list.JSON200.Buses, 1)
	assert.Equal(t, "orders", *(*list.JSON200.Buses)[0].Name)
	assert.Nil(t, list.JSON200.NextToken)

	// ... and errors are problem documents with a stable code.
	missing, err := eb.GetApiV1BusesBusWithResponse(ctx, "nope", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNotFound, missing.StatusCode(), string(missing.Body))
	require.NotNil(t, missing.JSON404, string(missing.Body))
	assert.Equal(t, "BusNotFound", *missing.JSON404.Code)
	assert.Equal(t, 404, *missing.JSON404.Status)

	// Everything the binary wrote into its data directory is its owner's only: database, -wal and -shm, keys,
	// tokens, credentials, the JetStream store.
	assert.Empty(t, privateFiles(t, data), "files of the data directory that others may read")
}
