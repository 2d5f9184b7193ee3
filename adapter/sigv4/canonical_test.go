package sigv4

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCanonicalPathsAgree: where the SDK signer signs exactly the client's headers, the header block built from
// the client's list (used when it does not) is the SDK's, byte for byte.
func TestCanonicalPathsAgree(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	cases := []struct {
		name, method, target, body string
		header                     map[string][]string
		token                      string
	}{
		{name: "AWS JSON", method: "POST", target: "http://events.local:8080/", body: `{"Name":"b"}`,
			header: map[string][]string{"Content-Type": {"application/x-amz-json-1.1"}, "X-Amz-Target": {"AWSEvents.ListEventBuses"}}},
		{name: "session token", method: "POST", target: "http://events.local/", body: `{}`, token: "TOKEN",
			header: map[string][]string{"X-Amz-Target": {"AWSEvents.PutEvents"}}},
		{name: "query and repeated header", method: "GET", target: "http://events.local/a?b=2&a=1&a=0",
			header: map[string][]string{"My-Header": {" v1 ", "v2   v3"}, "Content-Md5": {"x"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			for k, v := range tc.header {
				r.Header[k] = v
			}
			hash := sha256Hex(tc.body)
			creds := aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret", SessionToken: tc.token}
			require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, r, hash, "events", "us-east-1", at))
			r.URL.Scheme, r.URL.Host = "", "" // as a server sees it
			a, err := Parse(r)
			require.NoError(t, err)

			sdk, err := sdkCanonical(r, a, hash)
			require.NoError(t, err)
			lines := strings.Split(sdk, "\n")
			require.Equal(t, strings.Join(a.SignedHeaders, ";"), lines[len(lines)-2], "the SDK signed the client's headers")
			assert.Equal(t, sdk, specCanonical(lines[:3], r, a, hash))
			assert.NoError(t, Verify(r, []byte(tc.body), a, "secret", at))
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestCanonicalBeyondTheSDK: headers the SDK signer cannot sign as the client did are canonicalized as the SigV4
// specification says (expected canonical request written out by hand).
func TestCanonicalBeyondTheSDK(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("POST", "http://events.local/", nil)
	r.URL.Scheme, r.URL.Host = "", ""
	r.Header.Set("Content-Length", "0")
	r.Header.Set("User-Agent", "  aws-sdk-java/1.12   linux ")
	r.Header.Set("Date", "Wed, 04 Mar 2026 05:06:07 GMT")
	r.Header.Set("X-Amz-Date", "20260304T050607Z") // sent, not signed
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260304/us-east-1/events/aws4_request, "+
		"SignedHeaders=content-length;date;host;user-agent, Signature=00")
	a, err := Parse(r)
	require.NoError(t, err)
	hash := sha256Hex("")

	got, err := canonicalRequest(r, a, hash)
	require.NoError(t, err)
	assert.Equal(t, "POST\n/\n\n"+
		"content-length:0\n"+
		"date:Wed, 04 Mar 2026 05:06:07 GMT\n"+
		"host:events.local\n"+
		"user-agent:aws-sdk-java/1.12 linux\n"+
		"\n"+
		"content-length;date;host;user-agent\n"+hash, got)
}
