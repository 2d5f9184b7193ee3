package sigv4_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/adapter/sigv4"
)

const (
	accessKey = "AKIDEXAMPLE"
	secret    = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

// signedAt is when the requests signed by clientRequest are signed.
var signedAt = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// suiteAt is the time of the AWS SigV4 test suite (2015 edition).
var suiteAt = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)

// received is a request as the server saw it, and its body.
type received struct {
	r    *http.Request
	body []byte
}

// receive starts a server, lets send make requests to it, and returns the last request that arrived.
func receive(t *testing.T, send func(t *testing.T, url string, client *http.Client)) received {
	t.Helper()
	got := make(chan received, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- received{r: r.Clone(context.Background()), body: body}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = w.Write([]byte(`{"EventBuses":[]}`))
	}))
	defer srv.Close()
	send(t, srv.URL, srv.Client())
	var last received
	for {
		select {
		case last = <-got:
		default:
			require.NotNil(t, last.r, "the server received a request")
			return last
		}
	}
}

// clientRequest is a request signed by the v4 signer of aws-sdk-go-v2, as an AWS JSON 1.1 client would send it.
type clientRequest struct {
	method, path string // path with query; POST / when empty
	body         string
	header       map[string]string
	// signAlso are headers the SDK signer would not sign (User-Agent, ...), signed anyway as a client that signs
	// every header does (the SDK's ignore list is keyed by canonical names, so a lower-case key is signed).
	signAlso map[string]string
	token    string // session token
	// payloadHash is what is signed as the payload's hash; the body's SHA-256 when empty.
	payloadHash string
}

func (c clientRequest) send(t *testing.T, url string, client *http.Client) {
	method, path := c.method, c.path
	if method == "" {
		method, path = http.MethodPost, "/"
	}
	req, err := http.NewRequest(method, url+path, strings.NewReader(c.body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AWSEvents.ListEventBuses")
	req.Header.Set("User-Agent", "aws-sdk-go-v2/1.48.0")
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	for k, v := range c.signAlso {
		req.Header.Del(k)
		req.Header[strings.ToLower(k)] = []string{v}
	}
	hash := c.payloadHash
	if hash == "" {
		hash = sha256Hex(c.body)
	}
	creds := aws.Credentials{AccessKeyID: accessKey, SecretAccessKey: secret, SessionToken: c.token}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hash, "events", "us-east-1", signedAt))
	for k, v := range c.signAlso {
		require.Contains(t, req.Header.Get("Authorization"), strings.ToLower(k), "the client signed %s", k)
		delete(req.Header, strings.ToLower(k))
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
}

// suiteRequest is a request of the AWS SigV4 test suite, sent with the suite's Authorization.
type suiteRequest struct {
	method, path, host, body, authorization string
	header                                  map[string]string
}

func (c suiteRequest) send(t *testing.T, url string, client *http.Client) {
	req, err := http.NewRequest(c.method, url+c.path, strings.NewReader(c.body))
	require.NoError(t, err)
	req.Host = c.host
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	req.Header.Set("Authorization", c.authorization)
	resp, err := client.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
}

// eventBridgeClient calls ListEventBuses with the EventBridge client of aws-sdk-go-v2.
func eventBridgeClient(t *testing.T, url string, _ *http.Client) {
	client := eventbridge.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(accessKey, secret, ""),
		BaseEndpoint: aws.String(url),
	})
	_, err := client.ListEventBuses(context.Background(), &eventbridge.ListEventBusesInput{NamePrefix: aws.String("orders")})
	require.NoError(t, err)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

const listBody = `{"NamePrefix":"orders"}`

// TestVerify: requests signed by the AWS SDK signer, the EventBridge client and the AWS test suite verify, and
// every change to what was signed, a wrong secret or time, or a malformed Authorization is refused with the
// exception the AWS SDKs expect. Each case goes through Parse then Verify, as a caller does.
func TestVerify(t *testing.T) {
	t.Parallel()
	plain := clientRequest{body: listBody}
	cases := []struct {
		name   string
		send   func(t *testing.T, url string, client *http.Client)
		change func(r *http.Request, body *[]byte)
		secret string    // secret when empty
		now    time.Time // signedAt when zero
		// want is the error's code, "" for success; message, when set, is the whole message.
		want, message string
	}{
		{name: "valid", send: plain.send},
		{name: "wrong secret", send: plain.send, secret: "other", want: sigv4.CodeInvalidSignature,
			message: "The request signature we calculated does not match the signature you provided. " +
				"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."},
		{name: "changed body", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(_ *http.Request, body *[]byte) { *body = []byte(`{"NamePrefix":"other"}`) }},
		{name: "changed signed header", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("Content-Type", "application/json") }},
		{name: "changed X-Amz-Target", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("X-Amz-Target", "AWSEvents.DeleteEventBus") }},
		{name: "changed path", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.URL.Path = "/admin" }},
		{name: "added query", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.URL.RawQuery = "Action=DeleteEventBus" }},
		{name: "changed query", send: clientRequest{method: "POST", path: "/?b=2&a=1", body: listBody}.send,
			want:   sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.URL.RawQuery = "b=3&a=1" }},
		{name: "query in another order", send: clientRequest{method: "POST", path: "/?b=2&a=1&a=0", body: listBody}.send,
			change: func(r *http.Request, _ *[]byte) { r.URL.RawQuery = "a=0&a=1&b=2" }},
		{name: "malformed query", send: clientRequest{method: "POST", path: "/?a=1", body: listBody}.send,
			want:   sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.URL.RawQuery = "a=1;b=2" }},
		{name: "changed unsigned User-Agent", send: plain.send,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("User-Agent", "curl/8.0") }},
		{name: "added unsigned header", send: plain.send,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("X-Amzn-Trace-Id", "Root=1-abc") }},
		{name: "signed header removed", send: plain.send, want: sigv4.CodeInvalidSignature,
			message: "The signed header 'x-amz-target' is not in the request.",
			change:  func(r *http.Request, _ *[]byte) { r.Header.Del("X-Amz-Target") }},
		{name: "Host rewritten by a proxy", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Host = "backend.internal:8080" }},
		{name: "15 minutes old", send: plain.send, now: signedAt.Add(15 * time.Minute)},
		{name: "15 minutes ahead", send: plain.send, now: signedAt.Add(-15 * time.Minute)},
		{name: "16 minutes old", send: plain.send, now: signedAt.Add(16 * time.Minute), want: sigv4.CodeInvalidSignature,
			message: "Signature expired: 20260304T050607Z is now earlier than 20260304T050707Z (20260304T052207Z - 15 min.)"},
		{name: "16 minutes ahead", send: plain.send, now: signedAt.Add(-16 * time.Minute), want: sigv4.CodeInvalidSignature,
			message: "Signature not yet current: 20260304T050607Z is still later than 20260304T050507Z (20260304T045007Z + 15 min.)"},
		{name: "X-Amz-Date changed", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("X-Amz-Date", "20260304T050608Z") }},
		{name: "credential date not the request's day", send: plain.send, want: sigv4.CodeInvalidSignature,
			message: "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: " +
				"'20260303' != '20260304', from '20260304T050607Z'.",
			change: func(r *http.Request, _ *[]byte) {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/20260304/", "/20260303/", 1))
			}},
		{name: "region changed in the scope", send: plain.send, want: sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) {
				r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/us-east-1/", "/eu-west-1/", 1))
			}},
		{name: "session token", send: clientRequest{body: listBody, token: "FQoGZXIvYXdzEXAMPLETOKEN"}.send},
		{name: "session token changed", send: clientRequest{body: listBody, token: "FQoGZXIvYXdzEXAMPLETOKEN"}.send,
			want:   sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("X-Amz-Security-Token", "other") }},
		{name: "payload hash header", send: clientRequest{body: listBody,
			header: map[string]string{"X-Amz-Content-Sha256": sha256Hex(listBody)}}.send},
		{name: "payload hash header of another body", send: clientRequest{body: listBody,
			header: map[string]string{"X-Amz-Content-Sha256": sha256Hex(listBody)}}.send,
			want:    sigv4.CodeInvalidSignature,
			message: "The provided 'x-amz-content-sha256' header does not match what was computed.",
			change:  func(_ *http.Request, body *[]byte) { *body = []byte(`{}`) }},
		{name: "unsigned payload", send: clientRequest{body: listBody, payloadHash: "UNSIGNED-PAYLOAD",
			header: map[string]string{"X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD"}}.send,
			want: sigv4.CodeInvalidSignature, message: "UNSIGNED-PAYLOAD is not accepted by this API: the payload must be signed."},
		{name: "client signed User-Agent", send: clientRequest{body: listBody,
			signAlso: map[string]string{"User-Agent": "aws-sdk-java/1.12.0"}}.send},
		{name: "client signed User-Agent, changed", send: clientRequest{body: listBody,
			signAlso: map[string]string{"User-Agent": "aws-sdk-java/1.12.0"}}.send,
			want:   sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("User-Agent", "curl/8.0") }},
		{name: "header values trimmed and spaces collapsed", send: clientRequest{body: listBody,
			header: map[string]string{"X-Amz-Meta": "  a   b  c "}}.send},
		{name: "GET with empty body", send: clientRequest{method: "GET", path: "/buses?limit=10"}.send},
		{name: "escaped path", send: clientRequest{method: "POST", path: "/a%20b/c%2Fd", body: listBody}.send},

		{name: "EventBridge client", send: eventBridgeClient, now: time.Now()},
		{name: "EventBridge client, changed X-Amz-Target", send: eventBridgeClient, now: time.Now(),
			want:   sigv4.CodeInvalidSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("X-Amz-Target", "AWSEvents.DeleteEventBus") }},
		{name: "EventBridge client, changed body", send: eventBridgeClient, now: time.Now(),
			want:   sigv4.CodeInvalidSignature,
			change: func(_ *http.Request, body *[]byte) { *body = []byte(`{"NamePrefix":"other"}`) }},

		// The AWS SigV4 test suite (2015 edition: service "service", X-Amz-Date), expected signatures as published.
		{name: "suite get-vanilla", now: suiteAt, send: suiteRequest{method: "GET", path: "/", host: "example.amazonaws.com",
			header: map[string]string{"X-Amz-Date": "20150830T123600Z"},
			authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"}.send},
		{name: "suite get-vanilla-query-order-key-case", now: suiteAt, send: suiteRequest{method: "GET",
			path: "/?Param2=value2&Param1=value1", host: "example.amazonaws.com",
			header: map[string]string{"X-Amz-Date": "20150830T123600Z"},
			authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"}.send},
		// The body is not empty and content-length is not signed.
		{name: "suite post-x-www-form-urlencoded", now: suiteAt, send: suiteRequest{method: "POST", path: "/",
			host: "example.amazonaws.com", body: "Param1=value1",
			header: map[string]string{"X-Amz-Date": "20150830T123600Z", "Content-Type": "application/x-www-form-urlencoded"},
			authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
				"SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"}.send},
		{name: "suite post-x-www-form-urlencoded, changed body", now: suiteAt, want: sigv4.CodeInvalidSignature,
			send: suiteRequest{method: "POST", path: "/", host: "example.amazonaws.com", body: "Param1=value1",
				header: map[string]string{"X-Amz-Date": "20150830T123600Z", "Content-Type": "application/x-www-form-urlencoded"},
				authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, " +
					"SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"}.send,
			change: func(_ *http.Request, body *[]byte) { *body = []byte("Param1=value2") }},
		// The 2011 edition signs the Date header and has no X-Amz-Date: the SDK signer would add x-amz-date.
		{name: "suite 2011 get-vanilla (Date header)", now: time.Date(2011, 9, 9, 23, 36, 0, 0, time.UTC),
			send: suiteRequest{method: "GET", path: "/", host: "host.foo.com",
				header: map[string]string{"Date": "Mon, 09 Sep 2011 23:36:00 GMT"},
				authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20110909/us-east-1/host/aws4_request, " +
					"SignedHeaders=date;host, Signature=b27ccfbfa7df52a200ff74193ca6e32d4b48b8856fab7ebf1c595d0670a7e470"}.send},

		{name: "no Authorization", send: plain.send, want: sigv4.CodeMissingAuthenticationToken,
			message: "Missing Authentication Token",
			change:  func(r *http.Request, _ *[]byte) { r.Header.Del("Authorization") }},
		{name: "no Credential", send: plain.send, want: sigv4.CodeIncompleteSignature,
			message: "Authorization header requires 'Credential' parameter.",
			change:  setAuthorization("AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date, Signature=abcd")},
		{name: "no Credential nor Signature", send: plain.send, want: sigv4.CodeIncompleteSignature,
			message: "Authorization header requires 'Credential' parameter. Authorization header requires 'Signature' parameter.",
			change:  setAuthorization("AWS4-HMAC-SHA256 SignedHeaders=host;x-amz-date")},
		{name: "scope without service", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=abcd")},
		{name: "scope with a bad date", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/2026-03-04/us-east-1/events/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=abcd")},
		{name: "scope with a bad terminator", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws5_request, " +
				"SignedHeaders=host;x-amz-date, Signature=abcd")},
		{name: "other algorithm", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-ECDSA-P256-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=abcd")},
		{name: "bearer token", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("Bearer abc")},
		{name: "missing Signature", send: plain.send, want: sigv4.CodeIncompleteSignature,
			message: "Authorization header requires 'Signature' parameter.",
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws4_request, " +
				"SignedHeaders=host;x-amz-date")},
		{name: "empty Signature", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=")},
		{name: "SignedHeaders without host", send: plain.send, want: sigv4.CodeIncompleteSignature,
			message: "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws4_request, " +
				"SignedHeaders=x-amz-date, Signature=abcd")},
		{name: "SignedHeaders not sorted", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws4_request, " +
				"SignedHeaders=x-amz-date;host, Signature=abcd")},
		{name: "unknown parameter", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: setAuthorization("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260304/us-east-1/events/aws4_request, " +
				"SignedHeaders=host;x-amz-date, Signature=abcd, Extra=1")},
		{name: "no X-Amz-Date nor Date", send: plain.send, want: sigv4.CodeIncompleteSignature,
			message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
			change:  func(r *http.Request, _ *[]byte) { r.Header.Del("X-Amz-Date") }},
		{name: "malformed X-Amz-Date", send: plain.send, want: sigv4.CodeIncompleteSignature,
			change: func(r *http.Request, _ *[]byte) { r.Header.Set("X-Amz-Date", "2026-03-04T05:06:07Z") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := receive(t, tc.send)
			if tc.change != nil {
				tc.change(got.r, &got.body)
			}
			key := secret
			if tc.secret != "" {
				key = tc.secret
			}
			now := signedAt
			if !tc.now.IsZero() {
				now = tc.now
			}

			var err error
			a, err := sigv4.Parse(got.r)
			if err == nil {
				assert.Equal(t, accessKey, a.AccessKeyID)
				err = sigv4.Verify(got.r, got.body, a, key, now)
				// The same with a signing key the caller caches.
				errWithKey := sigv4.VerifyWithKey(got.r, got.body, a, sigv4.SigningKey(key, a.Date, a.Region, a.Service), now)
				assert.Equal(t, err, errWithKey)
			}

			if tc.want == "" {
				require.NoError(t, err, "Authorization: %s", got.r.Header.Get("Authorization"))
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, &sigv4.Error{Code: tc.want})
			var e *sigv4.Error
			require.True(t, errors.As(err, &e))
			assert.NotEmpty(t, e.Message)
			if tc.message != "" {
				assert.Equal(t, tc.message, e.Message)
			}
		})
	}
}

func setAuthorization(v string) func(r *http.Request, _ *[]byte) {
	return func(r *http.Request, _ *[]byte) { r.Header.Set("Authorization", v) }
}

// TestParse: what Parse reads of a request signed by the SDK signer.
func TestParse(t *testing.T) {
	t.Parallel()
	got := receive(t, clientRequest{body: listBody, token: "TOKEN"}.send)
	a, err := sigv4.Parse(got.r)
	require.NoError(t, err)
	assert.Equal(t, accessKey, a.AccessKeyID)
	assert.Equal(t, "20260304", a.Date)
	assert.Equal(t, "us-east-1", a.Region)
	assert.Equal(t, "events", a.Service)
	assert.Equal(t, []string{"content-length", "content-type", "host", "x-amz-date", "x-amz-security-token", "x-amz-target"},
		a.SignedHeaders)
	assert.Len(t, a.Signature, 64)
	assert.Equal(t, signedAt, a.Time)
	assert.Equal(t, time.UTC, a.Time.Location())
}

// TestErrorIs: errors.Is compares codes, so the sentinels match any message.
func TestErrorIs(t *testing.T) {
	t.Parallel()
	err := &sigv4.Error{Code: sigv4.CodeInvalidSignature, Message: "Signature expired: ..."}
	assert.ErrorIs(t, err, sigv4.ErrInvalidSignature)
	assert.NotErrorIs(t, err, sigv4.ErrIncompleteSignature)
	assert.Equal(t, "InvalidSignatureException: Signature expired: ...", err.Error())
}
