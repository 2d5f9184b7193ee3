package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"github.com/eventbridge-go/eventbridge/web/rocketmq"
)

// listOperation names the list operations of every dialect: "<resource>.list" and RocketMQ's "list<Resources>".
var listOperation = regexp.MustCompile(`(\.list|\.list[A-Z][A-Za-z]*)$`)

// nulls returns the paths in v whose value is null.
func nulls(path string, v any) []string {
	switch x := v.(type) {
	case nil:
		return []string{path}
	case map[string]any:
		var out []string
		for k, e := range x {
			out = append(out, nulls(path+"."+k, e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, nulls(path+"[]", e)...)
		}
		return out
	}
	return nil
}

// rocketMQ posts body to path in the RocketMQ EventBridge dialect, in a's account (its own header).
func rocketMQ(t *testing.T, a api, path string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.base+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(rocketmq.AccountHeader, a.account)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, out
}

// TestEveryListIsAnArrayWhenEmpty walks every list operation of every dialect of the control plane, taken from the
// operation tables, on an account that has one bus with one rule and nothing else: each answers 200 with no null
// anywhere (an empty list is [], never null), so that clients that iterate do not fail.
func TestEveryListIsAnArrayWhenEmpty(t *testing.T) {
	m := startMain(t, t.TempDir())
	defer func() { require.NoError(t, m.Close()) }()
	a := apiOf(t, m).newAccount("empty")
	a.must("POST", "/api/v1/buses", map[string]any{"name": "b"}, 201)
	a.must("POST", "/api/v1/buses/b/rules", map[string]any{"name": "r", "eventPattern": map[string]any{"source": []any{"x"}}}, 201)
	params := strings.NewReplacer(":bus", "b", ":rule", "r", ":account", "empty")
	rocketBody := []byte(`{"eventBusName": "b", "eventRuleName": "r"}`)

	walked := 0
	for _, d := range web.Dialects(web.Config{}, web.Services{}, rest.New, rocketmq.New) {
		for _, op := range d.Operations {
			if !listOperation.MatchString(op.Name) {
				continue
			}
			walked++
			var status int
			var out []byte
			if d.Name == "rocketmq" {
				status, out = rocketMQ(t, a, op.Path, rocketBody)
			} else {
				status, out = a.do(op.Method, params.Replace(op.Path), "application/json", nil)
			}
			require.Equal(t, http.StatusOK, status, "%s %s: %s", op.Name, op.Path, out)
			var v any
			require.NoError(t, json.Unmarshal(out, &v), "%s: %s", op.Name, out)
			assert.Empty(t, nulls(op.Name, v), "%s answers null: %s", op.Name, out)
		}
	}
	t.Logf("%d list operations walked", walked)
	assert.GreaterOrEqual(t, walked, 20, "the list operations of the tables")
}
