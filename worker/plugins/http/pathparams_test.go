package http_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/connector"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

func TestPathParametersFilledFromTheEvent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.EscapedPath())
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	s := newSink(t, map[string]string{httpsink.KeyURL: srv.URL + "/orders/*/tenants/*",
		httpsink.KeyPathParams: `["$.data.orderId", "$.tenant"]`}, true)
	e := orderEvent()
	require.NoError(t, s.Write(context.Background(), e))
	e.SetExtension("tenant", "a/b c")
	require.NoError(t, s.Write(context.Background(), e))
	mu.Lock()
	assert.Equal(t, []string{"/orders/o-1/tenants/acme", "/orders/o-1/tenants/a%2Fb%20c"}, paths,
		"values fill the segments in order, escaped")
	mu.Unlock()

	e = orderEvent()
	e.SetExtension("tenant", nil)
	err := s.Write(context.Background(), e)
	require.Error(t, err)
	assert.True(t, connector.IsPermanent(err), "an event without the value can never be delivered")
	assert.Contains(t, err.Error(), "$.tenant")
}

func TestPathParametersMustMatchTheURL(t *testing.T) {
	t.Parallel()
	spec := httpsink.Plugin().Spec
	for _, tc := range []struct{ url, params, want string }{
		{"https://x.example.com/a/*/b/*", `["$.data.a"]`, "1 paths and the url 2"},
		{"https://x.example.com/a", `["$.data.a"]`, "1 paths and the url 0"},
		{"https://x.example.com/a/*", `["data.a"]`, "path 0"},
		{"https://x.example.com/a/*", `{"a": 1}`, "JSON array"},
	} {
		cfg := map[string]string{httpsink.KeyURL: tc.url, httpsink.KeyPathParams: tc.params}
		_, err := httpsink.New(spec.Values(cfg), connector.Env{})
		require.Error(t, err, tc.url)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), httpsink.KeyPathParams)
	}
}
