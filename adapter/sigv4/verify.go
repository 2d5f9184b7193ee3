package sigv4

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/smithy-go/logging"
)

// MaxSkew is how far the request time may be from now: 15 minutes, as AWS allows.
const MaxSkew = 15 * time.Minute

// unsignedPayload is the X-Amz-Content-Sha256 of a request whose body is not signed (S3 takes it; this API does
// not, since the body is the whole request).
const unsignedPayload = "UNSIGNED-PAYLOAD"

// Verify checks that r, whose body is body (already read; r.Body is not read), was signed by a holder of secret
// with the Auth that Parse read from r: the request time within MaxSkew of now, the X-Amz-Content-Sha256 header
// (when present) equal to the body's hash (UNSIGNED-PAYLOAD is refused), then the signature recomputed and compared
// in constant time. r must be the request as received: Host, method, path and query as the client sent them (see
// the package doc on proxies). It does not judge a.Region and a.Service: the caller compares them with its own
// (AWS answers InvalidSignatureException "Credential should be scoped to correct service: 'events'."). It does
// not block.
//
// A failure is an *Error with code InvalidSignatureException (the signature does not match, the request time is
// too far from now, the credential date is not the day of the request time, the payload hash is wrong or
// unsigned, a signed header is absent, the query is malformed); any other error is a defect of this package (the
// SDK signer did not behave as it is known to) and the request must be refused as an internal error.
func Verify(r *http.Request, body []byte, a Auth, secret string, now time.Time) error {
	return VerifyWithKey(r, body, a, SigningKey(secret, a.Date, a.Region, a.Service), now)
}

// SigningKey derives the key of a secret for a date (yyyymmdd), region and service (the HMAC-SHA256 chain of
// SigV4), so that a caller may cache it per access key and day; VerifyWithKey is Verify with such a key.
func SigningKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

// VerifyWithKey is Verify with the signing key of the secret for a.Date, a.Region and a.Service (SigningKey).
// Its errors are Verify's.
func VerifyWithKey(r *http.Request, body []byte, a Auth, key []byte, now time.Time) error {
	t := a.Time.UTC()
	if day := t.Format(dateFormat); a.Date != day {
		return invalid(fmt.Sprintf("Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date "+
			"from HTTP: '%s' != '%s', from '%s'.", a.Date, day, t.Format(TimeFormat)))
	}
	now = now.UTC()
	if earliest := now.Add(-MaxSkew); t.Before(earliest) {
		return invalid(fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 15 min.)",
			t.Format(TimeFormat), earliest.Format(TimeFormat), now.Format(TimeFormat)))
	}
	if latest := now.Add(MaxSkew); t.After(latest) {
		return invalid(fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + 15 min.)",
			t.Format(TimeFormat), latest.Format(TimeFormat), now.Format(TimeFormat)))
	}

	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if v, ok := r.Header["X-Amz-Content-Sha256"]; ok {
		switch given := strings.TrimSpace(v[0]); {
		case given == unsignedPayload:
			return invalid("UNSIGNED-PAYLOAD is not accepted by this API: the payload must be signed.")
		case len(v) > 1 || given != payloadHash:
			return invalid("The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
	}

	canonical, err := canonicalRequest(r, a, payloadHash)
	if err != nil {
		return err
	}
	want := hex.EncodeToString(hmacSHA256(key, stringToSign(a, canonical)))
	if subtle.ConstantTimeCompare([]byte(want), []byte(a.Signature)) != 1 {
		return invalid(msgMismatch)
	}
	return nil
}

// stringToSign is the SigV4 string to sign of a canonical request.
func stringToSign(a Auth, canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return Algorithm + "\n" + a.Time.UTC().Format(TimeFormat) + "\n" +
		a.Date + "/" + a.Region + "/" + a.Service + "/aws4_request\n" + hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// errSigner is a defect: the SDK signer did not produce a canonical request of the known form.
var errSigner = errors.New("sigv4: the SDK v4 signer did not report a canonical request of the known form")

// canonicalRequest rebuilds the canonical request the client signed.
//
// The SDK signer builds it from a copy of r carrying only the signed headers (sdkCanonical); it takes the method
// as is, the path as EscapedPath escaped once more (the double encoding every service but S3 expects), the query
// parsed and re-encoded sorted, and as headers: host (r.Host, with no default-port stripping since the copy has no
// scheme), content-length when the copy's ContentLength is above 0 (the copy has the signed length, or none),
// x-amz-date set from the signing time, and every header of the copy except those it ignores (Authorization,
// User-Agent, X-Amzn-Trace-Id, Expect, Transfer-Encoding). If the headers it signed are not the client's list
// (the client signed an ignored header, a content-length of 0, or Date with x-amz-date absent or unsigned), the
// header block is built from the client's list instead (specCanonical), with the SDK's rules for values: trimmed,
// runs of spaces made one, repeated headers joined by commas. The check is on the SDK's own output, so a future
// SDK that signs other headers falls back rather than failing valid requests.
func canonicalRequest(r *http.Request, a Auth, payloadHash string) (string, error) {
	canonical, err := sdkCanonical(r, a, payloadHash)
	if err != nil {
		return "", err
	}
	// method, path, query, header lines..., "", signed headers, payload hash
	lines := strings.Split(canonical, "\n")
	n := len(lines)
	if n < 7 || lines[n-1] != payloadHash || lines[n-3] != "" {
		return "", errSigner
	}
	if lines[n-2] == strings.Join(a.SignedHeaders, ";") {
		return canonical, nil
	}
	return specCanonical(lines[:3], r, a, payloadHash), nil
}

// sdkCanonical is the canonical request of the SDK signer for a copy of r that carries the headers a lists.
func sdkCanonical(r *http.Request, a Auth, payloadHash string) (string, error) {
	if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
		// URL.Query, which the signer reads, would drop the malformed pairs from what is signed.
		return "", invalid("The query string is malformed.")
	}
	header := http.Header{}
	var contentLength int64
	for _, name := range a.SignedHeaders {
		switch name {
		case "host":
			continue
		case "content-length":
			v, ok := signedContentLength(r)
			if !ok {
				return "", invalid("The signed header 'content-length' is not in the request.")
			}
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				contentLength = n
			}
			continue
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		v, ok := r.Header[key]
		if !ok {
			return "", invalid("The signed header '" + name + "' is not in the request.")
		}
		header[key] = slices.Clone(v)
	}
	u := &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	copied := &http.Request{Method: r.Method, URL: u, Host: r.Host, Header: header, ContentLength: contentLength}

	canonical := ""
	capture := logging.LoggerFunc(func(_ logging.Classification, _ string, v ...any) {
		if len(v) > 0 {
			canonical, _ = v[0].(string)
		}
	})
	// The signature the SDK computes is discarded: it is made with a placeholder secret, so that the final HMAC
	// can use a cached signing key.
	creds := aws.Credentials{AccessKeyID: a.AccessKeyID, SecretAccessKey: "-"}
	err := v4.NewSigner().SignHTTP(context.Background(), creds, copied, payloadHash, a.Service, a.Region, a.Time,
		func(o *v4.SignerOptions) {
			o.Logger, o.LogSigning = capture, true
			o.DisableSessionToken = true // a token the client signed is a header of the copy already
		})
	if err != nil {
		return "", fmt.Errorf("sigv4: signing the copy: %w", err)
	}
	return canonical, nil
}

// specCanonical is the canonical request with the SDK's first three lines (method, path, query) and the header
// block built from a.SignedHeaders; canonicalRequest has checked that r has each of them.
func specCanonical(head []string, r *http.Request, a Auth, payloadHash string) string {
	var b strings.Builder
	for _, line := range head {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	for _, name := range a.SignedHeaders {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(canonicalValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(a.SignedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

// signedContentLength is the Content-Length the client sent: the header, or what the server read of it.
func signedContentLength(r *http.Request) (string, bool) {
	if v := r.Header.Get("Content-Length"); v != "" {
		return v, true
	}
	if r.ContentLength >= 0 && len(r.TransferEncoding) == 0 {
		return strconv.FormatInt(r.ContentLength, 10), true
	}
	return "", false
}

// canonicalValue is the value of one signed header in the canonical request; canonicalRequest has checked that
// the request has it.
func canonicalValue(r *http.Request, name string) string {
	switch name {
	case "host":
		return collapseSpaces(r.Host)
	case "content-length":
		v, _ := signedContentLength(r)
		return collapseSpaces(v)
	}
	values := r.Header[textproto.CanonicalMIMEHeaderKey(name)]
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = collapseSpaces(v)
	}
	return strings.Join(out, ",")
}

// collapseSpaces trims a value and makes each run of spaces inside it one space, as the SDK signer does (spaces
// only; tabs are kept).
func collapseSpaces(v string) string {
	var b strings.Builder
	space := false
	for _, c := range []byte(strings.Trim(v, " ")) {
		if c == ' ' {
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
	}
	return strings.TrimSpace(b.String())
}
