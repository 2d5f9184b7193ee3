package http_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	httpsink "github.com/eventbridge-go/eventbridge/worker/plugins/http"
)

// verifyWebhook is the receiving side of Standard Webhooks, written from the specification: it checks the
// timestamp tolerance and one of the space-separated v1 signatures.
func verifyWebhook(secret string, h http.Header, body []byte, now time.Time) bool {
	var key []byte
	if rest, ok := strings.CutPrefix(secret, "whsec_"); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(rest); err != nil {
			return false
		}
	} else {
		key = []byte(secret)
	}
	id, tsText := h.Get("webhook-id"), h.Get("webhook-timestamp")
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil || id == "" {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > 5*time.Minute || d < -5*time.Minute {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + tsText + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, sig := range strings.Fields(h.Get("webhook-signature")) {
		v, b64, ok := strings.Cut(sig, ",")
		if !ok || v != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(b64)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

func TestWebhookSigning(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "a plain shared secret"} {
		for _, mode := range []string{"binary", "structured"} {
			var verified, requests atomic.Int32
			var headers atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				body, _ := io.ReadAll(r.Body)
				headers.Store(r.Header.Clone())
				if !verifyWebhook(secret, r.Header, body, time.Now()) {
					http.Error(w, "bad signature", http.StatusUnauthorized)
					return
				}
				verified.Add(1)
			}))
			s := newSink(t, map[string]string{"url": srv.URL, "mode": mode, "webhook.signing_secret": secret,
				"headers": `{"webhook-id": "spoofed", "X-Team": "shop"}`}, true)
			require.NoError(t, s.Write(context.Background(), orderEvent()), "%s %s", secret, mode)
			srv.Close()
			assert.Equal(t, int32(1), verified.Load())
			h := headers.Load().(http.Header)
			assert.Equal(t, "order-1", h.Get("webhook-id"), "the event id")
			ts, err := strconv.ParseInt(h.Get("webhook-timestamp"), 10, 64)
			require.NoError(t, err)
			assert.InDelta(t, time.Now().Unix(), ts, 5)
			assert.True(t, strings.HasPrefix(h.Get("webhook-signature"), "v1,"))
			assert.Equal(t, "shop", h.Get("X-Team"))

			// A receiver with another secret refuses it.
			assert.False(t, verifyWebhook("whsec_"+base64.StdEncoding.EncodeToString([]byte("other")), h, nil, time.Now()))
		}
	}
}

func TestWebhookNotSignedWithoutSecret(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	require.NoError(t, newSink(t, map[string]string{"url": srv.URL}, true).Write(context.Background(), orderEvent()))
	h := (<-got).header
	assert.Empty(t, h.Get("webhook-id"))
	assert.Empty(t, h.Get("webhook-signature"))
}

// The signature is over the exact body sent and the fixed clock's timestamp.
func TestWebhookSignatureValue(t *testing.T) {
	t.Parallel()
	srv, got := captureServer(t, http.StatusOK)
	c := &clock{now: time.Unix(1614265330, 0)}
	s := newClockedSink(t, map[string]string{"url": srv.URL, "webhook.signing_secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, c)
	require.NoError(t, s.Write(context.Background(), orderEvent()))
	req := <-got
	assert.Equal(t, "1614265330", req.header.Get("webhook-timestamp"))
	key, _ := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	assert.Equal(t, httpsink.WebhookSignature(key, "order-1", 1614265330, req.body), req.header.Get("webhook-signature"))
	assert.True(t, verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", req.header, req.body, c.Now()))
	tampered := append([]byte(nil), req.body...)
	tampered[0] ^= 1
	assert.False(t, verifyWebhook("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", req.header, tampered, c.Now()))
}

// The example of the Standard Webhooks specification.
func TestWebhookSignatureSpecExample(t *testing.T) {
	t.Parallel()
	key, err := base64.StdEncoding.DecodeString("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	assert.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		httpsink.WebhookSignature(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`)))
}

// A signed request retried after an OAuth refresh is signed again and verifies.
func TestWebhookSignedWithOAuthRetry(t *testing.T) {
	t.Parallel()
	ts := newTokenServer(t, "3600")
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	var ok atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") == "Bearer tok-1" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if verifyWebhook(secret, r.Header, body, time.Now()) {
			ok.Add(1)
		}
	}))
	t.Cleanup(srv.Close)
	cfg := oauthConfig(srv.URL, ts.URL)
	cfg["webhook.signing_secret"] = secret
	require.NoError(t, newSink(t, cfg, true).Write(context.Background(), orderEvent()))
	assert.Equal(t, int32(1), ok.Load())
}
