// Package aws is the dialect of Amazon EventBridge's own API: the AWS JSON 1.1 protocol (every call `POST /` with
// `X-Amz-Target: AWSEvents.<Operation>` and a JSON body), requests signed with Signature Version 4 by an access
// key of the account (docs/identity.md#access-keys), answers and errors in AWS's shapes (`__type` naming the
// exception the SDKs map). It translates AWS's requests into calls of the same domain services as /api/v1: a bus is
// a bus, a rule a rule (its pattern kept as written and matched through domain/awsevent's rewriting), a target a
// target. docs/aws-api.md lists the operations, what each maps to and what is refused.
//
// Facts about AWS's behaviour (messages, idempotent deletes, the refusal to delete a rule with targets) follow
// the AWS API reference and LocalStack's provider (localstack-core/localstack/services/events/provider.py).
package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/adapter/sigv4"
	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/web"
)

// TargetHeader is the header that names the operation of an AWS JSON 1.1 request.
const TargetHeader = "X-Amz-Target"

// TargetPrefix is the prefix of Amazon EventBridge's operations in TargetHeader.
const TargetPrefix = "AWSEvents."

// ContentType is the media type of AWS JSON 1.1 bodies, requests and answers.
const ContentType = "application/x-amz-json-1.1"

// Service is the service name of Amazon EventBridge in credential scopes and ARNs.
const Service = "events"

// DefaultRegion is the region the API answers for when none is configured.
const DefaultRegion = "us-east-1"

// MaxBodySize is the largest request body: PutEvents' 256 KB of entries with room for their JSON encoding.
const MaxBodySize = 1 << 20

// Exception names the SDKs map to their error types.
const (
	excValidation              = "ValidationException"
	excNotFound                = "ResourceNotFoundException"
	excAlreadyExists           = "ResourceAlreadyExistsException"
	excLimitExceeded           = "LimitExceededException"
	excInvalidEventPattern     = "InvalidEventPatternException"
	excInternal                = "InternalException"
	excUnavailable             = "ServiceUnavailableException"
	excThrottling              = "ThrottlingException"
	excAccessDenied            = "AccessDeniedException"
	excUnrecognizedClient      = "UnrecognizedClientException"
	excUnknownOperation        = "UnknownOperationException"
	excSerialization           = "SerializationException"
	msgUnrecognizedClient      = "The security token included in the request is invalid."
	msgMissingAuthentication   = "Missing Authentication Token"
	msgInternal                = "An internal error occurred; it has been logged."
	requestIDHeader            = "X-Amzn-RequestId"
	errorTypeHeader            = "X-Amzn-ErrorType"
	signingKeyCacheMaxEntries  = 10000
	credentialScopeServiceText = "Credential should be scoped to correct service: '" + Service + "'."
)

// Error is an error of this API in AWS's shape: the exception's name and its message.
type Error struct {
	Type    string `json:"__type"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Type + ": " + e.Message }

func validation(format string, args ...any) *Error {
	return &Error{Type: excValidation, Message: fmt.Sprintf(format, args...)}
}

// api holds what every handler needs.
type api struct {
	log    *slog.Logger
	s      web.Services
	region string
	now    func() time.Time
	keys   signingKeys
	// withDefault holds the accounts known to have their bus DefaultBus (ensureDefaultBus).
	withDefault sync.Map
}

var _ web.NewDialect = New

// New returns the Amazon EventBridge dialect over the services s, answering for cfg.AWSRegion (DefaultRegion when
// empty).
func New(cfg web.Config, s web.Services) web.Dialect {
	a := &api{log: cfg.Logger, s: s, region: cfg.AWSRegion, now: time.Now}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.region == "" {
		a.region = DefaultRegion
	}
	return web.Dialect{Name: "aws", WriteError: a.writeError, Authenticate: a.authenticate, TargetHeader: TargetHeader,
		Operations: a.operations()}
}

// operations is the dialect's operation table: every operation POST / with its name in TargetHeader.
func (a *api) operations() []web.Operation {
	op := func(name string, perm access.Permission, h gin.HandlerFunc) web.Operation {
		audit := web.AuditDefault
		if perm == access.PutEvents {
			audit = web.AuditNever // metrics count them
		}
		return web.Operation{Name: "aws." + strings.ToLower(name[:1]) + name[1:], Method: http.MethodPost, Path: "/",
			Target: TargetPrefix + name, Handler: h, Permission: perm, AnyBody: true, Audit: audit}
	}
	const read, write, operate, publish, test = access.Read, access.Write, access.Operate, access.PutEvents, access.Test
	return []web.Operation{
		op("CreateEventBus", write, call(a, a.createEventBus)),
		op("DeleteEventBus", write, call(a, a.deleteEventBus)),
		op("DescribeEventBus", read, call(a, a.describeEventBus)),
		op("ListEventBuses", read, call(a, a.listEventBuses)),
		op("UpdateEventBus", write, call(a, a.updateEventBus)),

		op("PutRule", write, call(a, a.putRule)),
		op("DeleteRule", write, call(a, a.deleteRule)),
		op("DescribeRule", read, call(a, a.describeRule)),
		op("EnableRule", write, call(a, a.enableRule)),
		op("DisableRule", write, call(a, a.disableRule)),
		op("ListRules", read, call(a, a.listRules)),
		op("ListRuleNamesByTarget", read, call(a, a.listRuleNamesByTarget)),

		op("PutTargets", write, call(a, a.putTargets)),
		op("RemoveTargets", write, call(a, a.removeTargets)),
		op("ListTargetsByRule", read, call(a, a.listTargetsByRule)),

		op("PutEvents", publish, call(a, a.putEvents)),
		op("TestEventPattern", test, call(a, a.testEventPattern)),

		op("CreateConnection", write, about("connections", "Name", call(a, a.createConnection))),
		op("DeleteConnection", write, about("connections", "Name", call(a, a.deleteConnection))),
		op("DescribeConnection", read, about("connections", "Name", call(a, a.describeConnection))),
		op("ListConnections", read, about("connections", "", call(a, a.listConnections))),
		op("UpdateConnection", write, about("connections", "Name", call(a, a.updateConnection))),
		op("DeauthorizeConnection", write, about("connections", "Name", call(a, a.deauthorizeConnection))),

		op("CreateApiDestination", write, about("api-destinations", "Name", call(a, a.createAPIDestination))),
		op("DeleteApiDestination", write, about("api-destinations", "Name", call(a, a.deleteAPIDestination))),
		op("DescribeApiDestination", read, about("api-destinations", "Name", call(a, a.describeAPIDestination))),
		op("ListApiDestinations", read, about("api-destinations", "", call(a, a.listAPIDestinations))),
		op("UpdateApiDestination", write, about("api-destinations", "Name", call(a, a.updateAPIDestination))),

		op("CreateArchive", write, about("archives", "ArchiveName", call(a, a.createArchive))),
		op("DeleteArchive", write, about("archives", "ArchiveName", call(a, a.deleteArchive))),
		op("DescribeArchive", read, about("archives", "ArchiveName", call(a, a.describeArchive))),
		op("ListArchives", read, about("archives", "", call(a, a.listArchives))),
		op("UpdateArchive", write, about("archives", "ArchiveName", call(a, a.updateArchive))),

		op("StartReplay", operate, about("replays", "ReplayName", call(a, a.startReplay))),
		op("CancelReplay", operate, about("replays", "ReplayName", call(a, a.cancelReplay))),
		op("DescribeReplay", read, about("replays", "ReplayName", call(a, a.describeReplay))),
		op("ListReplays", read, about("replays", "", call(a, a.listReplays))),

		op("TagResource", write, call(a, a.tagResource)),
		op("UntagResource", write, call(a, a.untagResource)),
		op("ListTagsForResource", read, call(a, a.listTagsForResource)),

		{Name: "aws.unknownOperation", Method: http.MethodPost, Path: "/", Target: web.TargetOther, Public: true,
			AnyBody: true, Handler: a.unknownOperation},
	}
}

// unknownOperation answers a request whose X-Amz-Target names no operation of this API.
func (a *api) unknownOperation(c *gin.Context) {
	target := c.GetHeader(TargetHeader)
	if target == "" {
		a.writeError(c, &Error{Type: excUnknownOperation, Message: "The request names no operation: " + TargetHeader +
			" is missing (AWS JSON 1.1: X-Amz-Target: AWSEvents.<Operation>)."})
		return
	}
	if len(target) > 100 {
		target = target[:100] + "..."
	}
	a.writeError(c, &Error{Type: excUnknownOperation, Message: fmt.Sprintf("Operation %q is not supported by this "+
		"API; docs/aws-api.md lists the operations.", strings.ToValidUTF8(target, "?"))})
}

const bodyKey = "eventbridge.aws.body"

// authenticate verifies the request's Signature Version 4 with the access key it names and returns the key's
// principal: the key's account and role. The body is read here (the signature covers it) and kept for the
// handler. Errors are *sigv4.Error, *Error or access.ErrUnauthenticated, answered by writeError.
func (a *api) authenticate(c *gin.Context) (*access.Principal, error) {
	auth, err := sigv4.Parse(c.Request)
	if err != nil {
		return nil, err
	}
	if auth.Service != Service {
		return nil, &sigv4.Error{Code: sigv4.CodeInvalidSignature, Message: credentialScopeServiceText}
	}
	if auth.Region != a.region {
		return nil, &sigv4.Error{Code: sigv4.CodeInvalidSignature, Message: fmt.Sprintf(
			"Credential should be scoped to a valid region: this endpoint answers for '%s', not '%s'.", a.region,
			strings.ToValidUTF8(auth.Region, "?"))}
	}
	if a.s.AccessKeys == nil {
		return nil, access.Unauthenticated()
	}
	p, secret, err := a.s.AccessKeys.Credentials(c.Request.Context(), auth.AccessKeyID)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodySize))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, validation("The request body is larger than %d bytes.", mbe.Limit)
		}
		return nil, &Error{Type: excSerialization, Message: "Reading the request body: " + err.Error()}
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	c.Set(bodyKey, body)

	signed := *c.Request // as the client sent it: the router routed it on another path
	signed.URL = web.OriginalURL(c)
	if err := sigv4.VerifyWithKey(&signed, body, auth, a.keys.get(auth, secret), a.now()); err != nil {
		return nil, err
	}
	a.s.AccessKeys.Used(c.Request.Context(), auth.AccessKeyID)
	return p, nil
}

// signingKeys caches the signing keys derived from access keys' secrets (four HMACs each), per key, day, region
// and service. An entry is used only with the secret it was derived from, so a key that is revoked or expired,
// which Credentials stops answering, is never verified with it; the cache is emptied when it is full.
type signingKeys struct {
	mu sync.Mutex
	m  map[string]signingKey
}

type signingKey struct {
	secret string
	key    []byte
}

func (s *signingKeys) get(a sigv4.Auth, secret string) []byte {
	id := a.AccessKeyID + "/" + a.Date + "/" + a.Region + "/" + a.Service
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.m[id]; ok && k.secret == secret {
		return k.key
	}
	if s.m == nil || len(s.m) >= signingKeyCacheMaxEntries {
		s.m = map[string]signingKey{}
	}
	k := sigv4.SigningKey(secret, a.Date, a.Region, a.Service)
	s.m[id] = signingKey{secret: secret, key: k}
	return k
}

// call is the shape of every operation: the body read into a new In (unknown members ignored, as AWS services
// do), the call do, and its answer with 200 in ContentType, or the error in AWS's shape.
func call[In any](a *api, do func(c *gin.Context, in *In) (any, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		a.ensureDefaultBus(c)
		in := new(In)
		if err := a.decode(c, in); err != nil {
			a.writeError(c, err)
			return
		}
		out, err := do(c, in)
		if err != nil {
			a.writeError(c, err)
			return
		}
		b, err := json.Marshal(out)
		if err != nil {
			a.writeError(c, err)
			return
		}
		c.Header(requestIDHeader, requestID(c))
		c.Data(http.StatusOK, ContentType, b)
	}
}

// ensureDefaultBus creates the account's bus DefaultBus the first time the account calls this API through this
// replica, if it has none: AWS's accounts always have it, and AWS's clients name it by leaving the bus out. A
// failure (the account's quota of buses is full) is logged, and the call goes on without it.
func (a *api) ensureDefaultBus(c *gin.Context) {
	account := web.AccountOf(c)
	if _, ok := a.withDefault.Load(account); ok || a.s.Buses == nil {
		return
	}
	_, err := a.s.Buses.Create(c.Request.Context(), account, DefaultBus, "The account's default event bus.", bus.Retention{})
	if err != nil && !errors.Is(err, bus.ErrAlreadyExists) {
		a.log.Warn("creating the default bus of an account", "account", account, "err", err)
		return
	}
	a.withDefault.Store(account, true)
}

// decode reads the body that authenticate kept into dst. An empty body is an empty object.
func (a *api) decode(c *gin.Context, dst any) error {
	ct := c.GetHeader("Content-Type")
	if media, _, err := mime.ParseMediaType(ct); ct != "" && (err != nil || !jsonMedia(media)) {
		return &Error{Type: excSerialization, Message: fmt.Sprintf("Content-Type %q is not %s.",
			strings.ToValidUTF8(ct, "?"), ContentType)}
	}
	v, _ := c.Get(bodyKey)
	body, _ := v.([]byte)
	web.SetAuditResource(c, auditResource(strings.TrimPrefix(c.GetHeader(TargetHeader), TargetPrefix), body))
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) && typ.Field != "" {
			return &Error{Type: excSerialization, Message: fmt.Sprintf("%s must be a JSON %s, not %s.",
				typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)}
		}
		return &Error{Type: excSerialization, Message: "The request body is not valid JSON: " + err.Error()}
	}
	return nil
}

// auditResource is the resource an operation's body names, for its audit entry, as /api/v1 names it:
// buses/<bus>, buses/<bus>/rules/<rule>, buses/<bus>/rules/<rule>/targets, ...
func auditResource(operation string, body []byte) string {
	var in struct{ Name, EventBusName, Rule string }
	_ = json.Unmarshal(body, &in) // a body that is no object names nothing; its error is answered elsewhere
	bus := func(v string) string {
		if v == "" {
			return DefaultBus
		}
		if _, name, ok := strings.Cut(v, ":event-bus/"); ok {
			return name
		}
		return v
	}
	switch operation {
	case "ListEventBuses":
		return "buses"
	case "CreateEventBus", "DeleteEventBus", "DescribeEventBus", "UpdateEventBus":
		return "buses/" + bus(in.Name)
	case "ListRules", "ListRuleNamesByTarget":
		return "buses/" + bus(in.EventBusName) + "/rules"
	case "PutTargets", "RemoveTargets", "ListTargetsByRule":
		return "buses/" + bus(in.EventBusName) + "/rules/" + in.Rule + "/targets"
	case "TestEventPattern":
		return "test-event-pattern"
	case "TagResource", "UntagResource", "ListTagsForResource":
		return "tags" // the resource itself once its ARN resolves (taggedID)
	}
	return "buses/" + bus(in.EventBusName) + "/rules/" + in.Name
}

func jsonMedia(media string) bool {
	switch media {
	case ContentType, "application/x-amz-json-1.0", "application/json":
		return true
	}
	return false
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "slice":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	case "bool":
		return "boolean"
	}
	return "number"
}

const requestIDKey = "eventbridge.aws.requestId"

// requestID is the request's id (a random UUID), answered in X-Amzn-RequestId.
func requestID(c *gin.Context) string {
	if id := c.GetString(requestIDKey); id != "" {
		return id
	}
	id := domain.NewUUID()
	c.Set(requestIDKey, id)
	return id
}

// errorOf is the status and the AWS error of any error: the signature's and this dialect's errors as they are,
// domain errors by kind (another account's resource, like a missing one, is ResourceNotFoundException), and
// anything else a logged 500 InternalException whose details are never answered.
func (a *api) errorOf(c *gin.Context, err error) (int, *Error) {
	var se *sigv4.Error
	if errors.As(err, &se) {
		if se.Code == sigv4.CodeMissingAuthenticationToken {
			return http.StatusForbidden, &Error{Type: se.Code, Message: msgMissingAuthentication}
		}
		return http.StatusBadRequest, &Error{Type: se.Code, Message: se.Message}
	}
	var ae *Error
	if errors.As(err, &ae) {
		return http.StatusBadRequest, ae
	}
	if errors.Is(err, access.ErrUnauthenticated) {
		return http.StatusForbidden, &Error{Type: excUnrecognizedClient, Message: msgUnrecognizedClient}
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusBadRequest, validation("The request body is larger than %d bytes.", mbe.Limit)
	}
	de, ok := domain.As(err)
	if !ok || de.Kind == domain.KindInternal {
		a.log.Error("internal error", "operation", web.OperationOf(c), "err", err)
		return http.StatusInternalServerError, &Error{Type: excInternal, Message: msgInternal}
	}
	msg := web.MessageOf(de)
	switch de.Kind {
	case domain.KindNotFound:
		return http.StatusBadRequest, &Error{Type: excNotFound, Message: msg}
	case domain.KindConflict:
		if strings.HasSuffix(de.Code, "AlreadyExists") {
			return http.StatusBadRequest, &Error{Type: excAlreadyExists, Message: msg}
		}
		return http.StatusBadRequest, &Error{Type: excValidation, Message: msg}
	case domain.KindInvalid, domain.KindTooLarge, domain.KindUnsupportedMediaType:
		if errors.Is(err, rule.ErrInvalidEventPattern) {
			return http.StatusBadRequest, &Error{Type: excInvalidEventPattern, Message: msg}
		}
		return http.StatusBadRequest, &Error{Type: excValidation, Message: msg}
	case domain.KindLimitExceeded:
		return http.StatusBadRequest, &Error{Type: excLimitExceeded, Message: msg}
	case domain.KindForbidden:
		return http.StatusBadRequest, &Error{Type: excAccessDenied, Message: msg}
	case domain.KindUnauthenticated:
		return http.StatusForbidden, &Error{Type: excUnrecognizedClient, Message: msgUnrecognizedClient}
	case domain.KindThrottled:
		return http.StatusBadRequest, &Error{Type: excThrottling, Message: msg}
	case domain.KindUnavailable:
		return http.StatusServiceUnavailable, &Error{Type: excUnavailable, Message: msg}
	}
	return http.StatusBadRequest, &Error{Type: excValidation, Message: msg}
}

// writeError answers err in AWS's shape and stops the handler chain.
func (a *api) writeError(c *gin.Context, err error) {
	status, out := a.errorOf(c, err)
	web.SetErrorCode(c, out.Type)
	web.SetRetryAfter(c, err)
	b, _ := json.Marshal(out) // two strings: cannot fail
	c.Header(requestIDHeader, requestID(c))
	c.Header(errorTypeHeader, out.Type)
	c.Data(status, ContentType, b)
	c.Abort()
}

// epoch is a time as AWS JSON 1.1 answers timestamps: seconds since the epoch, with milliseconds.
type epoch time.Time

func (t epoch) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(time.Time(t).UnixMilli())/1000, 'f', -1, 64)), nil
}

// UnmarshalJSON reads seconds since the epoch (what the SDKs send), or an RFC 3339 string.
func (t *epoch) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("a time must be seconds since the epoch or RFC 3339, not %q", s)
		}
		*t = epoch(v)
		return nil
	}
	// The decimal is read exactly (a float would make .978 into .977999999): whole seconds, then up to nine digits
	// of the fraction; an exponent form, which the SDKs do not send, goes through a float.
	text := string(b)
	whole, frac, _ := strings.Cut(text, ".")
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || strings.ContainsAny(frac, "eE+-") || strings.Trim(frac, "0123456789") != "" {
		f, ferr := strconv.ParseFloat(text, 64)
		if ferr != nil {
			return fmt.Errorf("a time must be seconds since the epoch, not %s", b)
		}
		*t = epoch(time.UnixMilli(int64(math.Round(f * 1000))).UTC())
		return nil
	}
	if len(frac) > 9 {
		frac = frac[:9]
	}
	ns, _ := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64) // digits only: cannot fail
	if sec < 0 {
		ns = -ns
	}
	*t = epoch(time.Unix(sec, ns).UTC())
	return nil
}
