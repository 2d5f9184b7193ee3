package http_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/jetstream/jetstreamtest"
	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

func TestBodyParametersAreAddedToTheData(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	params := map[string]string{httpsink.KeyBodyParams: `{"team": "shop"}`, httpsink.KeySecretBodyParams: `{"token": "t-1"}`}
	binary := newSink(t, map[string]string{httpsink.KeyURL: srv.URL, httpsink.KeyBodyParams: params[httpsink.KeyBodyParams],
		httpsink.KeySecretBodyParams: params[httpsink.KeySecretBodyParams]}, true)
	require.NoError(t, binary.Write(context.Background(), orderEvent()))
	text := jetstreamtest.Event("t-1", "note", nil)
	require.NoError(t, text.SetData("text/plain", []byte("hello")))
	require.NoError(t, binary.Write(context.Background(), text))
	structured := newSink(t, map[string]string{httpsink.KeyURL: srv.URL, httpsink.KeyMode: httpsink.ModeStructured,
		httpsink.KeyBodyParams: params[httpsink.KeyBodyParams]}, true)
	require.NoError(t, structured.Write(context.Background(), orderEvent()))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 3)
	assert.JSONEq(t, `{"orderId": "o-1", "amount": 120, "team": "shop", "token": "t-1"}`, bodies[0])
	assert.Equal(t, "hello", bodies[1], "data that is not a JSON object is sent as it is")
	var envelope map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(bodies[2]), &envelope))
	assert.JSONEq(t, `{"orderId": "o-1", "amount": 120, "team": "shop"}`, string(envelope["data"]))
	assert.JSONEq(t, `"order-1"`, string(envelope["id"]))
}
