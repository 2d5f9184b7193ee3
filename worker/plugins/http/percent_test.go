package http_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBinaryModePercentEncodesHeaders: the CloudEvents HTTP binding (3.1.3.2) has a sender percent-encode the
// values of ce-* headers: a space, '"', '%' and every byte outside printable ASCII. The spec's own example is
// "Euro € 😀" → "Euro%20%E2%82%AC%20%F0%9F%98%80"; what needs none is sent as it is.
func TestBinaryModePercentEncodesHeaders(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	s := newSink(t, map[string]string{"url": srv.URL + "/hook"}, true)
	e := orderEvent()
	e.SetSubject("Euro € 😀")
	e.SetExtension("quote", `say "50%" off`)
	e.SetExtension("plain", "a-b_c.d/e:f@g")
	require.NoError(t, s.Write(context.Background(), e))
	req := <-got
	assert.Equal(t, "Euro%20%E2%82%AC%20%F0%9F%98%80", req.header.Get("Ce-Subject"))
	assert.Equal(t, "say%20%2250%25%22%20off", req.header.Get("Ce-Quote"))
	assert.Equal(t, "a-b_c.d/e:f@g", req.header.Get("Ce-Plain"))
	assert.Equal(t, "order-1", req.header.Get("Ce-Id"))
	assert.Equal(t, "application/json", req.header.Get("Content-Type"), "Content-Type is no ce-* header")
}
