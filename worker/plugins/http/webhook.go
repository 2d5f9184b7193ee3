package http

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (https://www.standardwebhooks.com) headers.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

const whsecPrefix = "whsec_"

// webhookKey returns the HMAC key of a signing secret: the base64 bytes after whsec_ (the Standard Webhooks
// form), or else the secret's own bytes.
func webhookKey(secret string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(secret, whsecPrefix); ok {
		k, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			k, err = base64.RawStdEncoding.DecodeString(rest)
		}
		if err != nil || len(k) == 0 {
			return nil, errors.New("whsec_ must be followed by base64")
		}
		return k, nil
	}
	return []byte(secret), nil
}

func checkWebhookSecret(v string) error {
	_, err := webhookKey(v)
	return err
}

// WebhookSignature is the Standard Webhooks signature of a message: v1, and the base64 HMAC-SHA256 of
// "id.timestamp.body" under key.
func WebhookSignature(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// signWebhook sets the Standard Webhooks headers of a request whose body is body.
func signWebhook(h http.Header, key []byte, id string, now time.Time, body []byte) {
	ts := now.Unix()
	h.Set(HeaderWebhookID, id)
	h.Set(HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	h.Set(HeaderWebhookSignature, WebhookSignature(key, id, ts, body))
}
