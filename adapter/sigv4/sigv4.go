// Package sigv4 verifies AWS Signature Version 4 on incoming HTTP requests, for the AWS-compatible API (AWS JSON
// 1.1: `POST /` with `X-Amz-Target: AWSEvents.<Operation>`). The caller reads the Authorization header with Parse,
// looks up the secret of Auth.AccessKeyID, reads the body and calls Verify (or VerifyWithKey with a signing key it
// caches per access key, day, region and service).
//
// The canonical request is built by the v4 signer of aws-sdk-go-v2, the code AWS's own Go clients sign with: the
// request is rebuilt with the headers the client signed and re-signed at the client's time, region and service.
// Where the client signed a set of headers that signer cannot produce (it always signs host and x-amz-date, signs
// content-length only when it is above 0, and never signs Authorization, User-Agent, X-Amzn-Trace-Id, Expect or
// Transfer-Encoding), the canonical headers are built here from the client's own SignedHeaders list, as the
// specification says; method, path and query still come from the SDK.
//
// The SDK signer reports its canonical request only through its signing log (SignerOptions.LogSigning), which
// is captured; the final HMAC is computed here, so that VerifyWithKey can use a cached signing key.
//
// # Proxies
//
// The client signs the Host it sends (and the method, path and query). A reverse proxy or load balancer that
// rewrites Host (to a backend's address) or the path (stripping a prefix) makes every signature fail with
// InvalidSignatureException, and so it must: a verifier that trusted a forwarded header instead would accept a
// request signed for another endpoint. Such a proxy must pass the original Host through (nginx:
// `proxy_set_header Host $http_host;`, Traefik and the AWS/GCP load balancers keep it by default; Apache
// `ProxyPreserveHost On`) and forward the path and query byte for byte. X-Forwarded-Host is not consulted.
package sigv4

import (
	"net/http"
	"strings"
	"time"
)

// Algorithm is the only signing algorithm accepted.
const Algorithm = "AWS4-HMAC-SHA256"

// TimeFormat is the form of X-Amz-Date and of the time in the string to sign (ISO 8601 basic, UTC).
const TimeFormat = "20060102T150405Z"

const dateFormat = "20060102"

// The exception names the AWS SDKs map to their error types; they go to the client as `__type` of the AWS JSON
// error body, with HTTP status 400 (IncompleteSignature, InvalidSignature) or 403 (MissingAuthenticationToken).
const (
	CodeIncompleteSignature        = "IncompleteSignatureException"
	CodeInvalidSignature           = "InvalidSignatureException"
	CodeMissingAuthenticationToken = "MissingAuthenticationTokenException"
)

// Error is a verification failure with the exception name the AWS SDKs expect (Code) and a message for the client.
// Two errors are the same for errors.Is when their codes are equal, so ErrInvalidSignature and the others serve
// as sentinels.
type Error struct {
	Code    string
	Message string
}

// Sentinels for errors.Is.
var (
	ErrIncompleteSignature        = &Error{Code: CodeIncompleteSignature}
	ErrInvalidSignature           = &Error{Code: CodeInvalidSignature}
	ErrMissingAuthenticationToken = &Error{Code: CodeMissingAuthenticationToken}
)

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func incomplete(msg string) *Error { return &Error{Code: CodeIncompleteSignature, Message: msg} }
func invalid(msg string) *Error    { return &Error{Code: CodeInvalidSignature, Message: msg} }

// msgMismatch is AWS's wording of a signature that does not match.
const msgMismatch = "The request signature we calculated does not match the signature you provided. " +
	"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."

// Auth is what a request's Authorization header and X-Amz-Date say. The header reads
// `AWS4-HMAC-SHA256 Credential=<key>/<date>/<region>/<service>/aws4_request, SignedHeaders=..., Signature=...`.
type Auth struct {
	AccessKeyID     string
	Date            string // yyyymmdd of the credential scope
	Region, Service string
	SignedHeaders   []string  // lower-case, as listed
	Signature       string    // hex
	Time            time.Time // X-Amz-Date (or Date header), UTC
}

// Parse reads the Authorization header and the request time; it does not know secrets, and checks only the form.
// The errors are *Error: MissingAuthenticationTokenException when there is no Authorization header,
// IncompleteSignatureException when it is malformed (another algorithm, a part missing or given twice, a
// credential scope that is not <key>/<yyyymmdd>/<region>/<service>/aws4_request, SignedHeaders not lower-case and
// sorted or without host) or when neither X-Amz-Date nor Date gives the time.
func Parse(r *http.Request) (Auth, error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return Auth{}, &Error{Code: CodeMissingAuthenticationToken, Message: "Missing Authentication Token"}
	}
	if len(values) > 1 {
		return Auth{}, incomplete("The Authorization header is given more than once.")
	}
	alg, params, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	if alg != Algorithm {
		return Auth{}, incomplete("Only the " + Algorithm + " algorithm is supported.")
	}

	found := map[string]string{}
	for part := range strings.SplitSeq(params, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || (k != "Credential" && k != "SignedHeaders" && k != "Signature") {
			return Auth{}, incomplete("Authorization header has a malformed or unknown parameter; expected " +
				"Credential=..., SignedHeaders=..., Signature=....")
		}
		if _, dup := found[k]; dup {
			return Auth{}, incomplete("Authorization header gives '" + k + "' more than once.")
		}
		found[k] = v
	}
	var missing []string
	for _, k := range []string{"Credential", "SignedHeaders", "Signature"} {
		if found[k] == "" {
			missing = append(missing, "Authorization header requires '"+k+"' parameter.")
		}
	}
	if len(missing) > 0 {
		return Auth{}, incomplete(strings.Join(missing, " "))
	}

	var a Auth
	scope := strings.Split(found["Credential"], "/")
	if len(scope) != 5 || scope[0] == "" || scope[2] == "" || scope[3] == "" {
		return Auth{}, incomplete("Credential must be <access key id>/<yyyymmdd>/<region>/<service>/aws4_request.")
	}
	if _, err := time.Parse(dateFormat, scope[1]); err != nil || len(scope[1]) != len(dateFormat) {
		return Auth{}, incomplete("Invalid credential date. Date is not the required format: yyyyMMdd.")
	}
	if scope[4] != "aws4_request" {
		return Auth{}, incomplete("Credential should be scoped with a valid terminator: 'aws4_request'.")
	}
	a.AccessKeyID, a.Date, a.Region, a.Service = scope[0], scope[1], scope[2], scope[3]

	a.SignedHeaders = strings.Split(found["SignedHeaders"], ";")
	hasHost := false
	for i, h := range a.SignedHeaders {
		// Sorted, unique and lower-case is what the canonical request requires; a list in any other form was not
		// signed by a conforming client.
		if h == "" || h != strings.ToLower(h) || (i > 0 && h <= a.SignedHeaders[i-1]) {
			return Auth{}, incomplete("SignedHeaders must be lower-case header names, sorted, separated by ';'.")
		}
		hasHost = hasHost || h == "host"
	}
	if !hasHost {
		return Auth{}, incomplete("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.")
	}
	a.Signature = found["Signature"]

	t, err := requestTime(r)
	if err != nil {
		return Auth{}, err
	}
	a.Time = t
	return a, nil
}

// requestTime is X-Amz-Date, or the Date header when there is none.
func requestTime(r *http.Request) (time.Time, error) {
	if v := r.Header.Values("X-Amz-Date"); len(v) > 0 {
		t, err := time.Parse(TimeFormat, strings.TrimSpace(v[0]))
		if err != nil || len(v) > 1 {
			return time.Time{}, incomplete("X-Amz-Date must be given once, as yyyyMMdd'T'HHmmss'Z'.")
		}
		return t.UTC(), nil
	}
	if v := r.Header.Get("Date"); v != "" {
		t, err := http.ParseTime(v)
		if err != nil {
			return time.Time{}, incomplete("The Date header is not an HTTP date.")
		}
		return t.UTC(), nil
	}
	return time.Time{}, incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
}
