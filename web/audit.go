package web

import (
	"context"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/audit"
)

// AuditPolicy says whether the calls of an operation write an audit entry.
type AuditPolicy int

const (
	// AuditDefault audits every operation that is not Public.
	AuditDefault AuditPolicy = iota
	// AuditNever is for the operations that are not control operations: PutEvents and scrapes of /metrics
	// (metrics count them).
	AuditNever
	// AuditAlways audits a Public operation that is a control operation: signing in.
	AuditAlways
)

// Audited reports whether the calls of op write an audit entry.
func (op Operation) Audited() bool {
	switch op.Audit {
	case AuditNever:
		return false
	case AuditAlways:
		return true
	}
	return !op.Public
}

// AuditRecorder writes audit entries (*audit.Recorder is one); change is set for an operation that changes
// something, whose entry is written before the answer.
type AuditRecorder interface {
	Record(ctx context.Context, e audit.Entry, change bool) error
}

const (
	auditResourceKey = "eventbridge.auditResource"
	auditActorKey    = "eventbridge.auditActor"
	errorCodeKey     = "eventbridge.errorCode"
)

// SetAuditResource names the resource the request acts on in its audit entry ("buses/orders/rules/paid"), when
// the path does not say it all (a create names it in its body; the RocketMQ API names everything in bodies).
func SetAuditResource(c *gin.Context, resource string) { c.Set(auditResourceKey, resource) }

// AppendAuditResource names the resource as the request's path does, followed by "/" and key (the id or name a
// create gives its new resource).
func AppendAuditResource(c *gin.Context, key string) {
	SetAuditResource(c, pathResource(c.Request.URL.Path)+"/"+key)
}

// SetAuditActor names the actor of a request that no credential authenticated (a sign-in: the user who signed in,
// or the name that was tried).
func SetAuditActor(c *gin.Context, kind, id, name string) {
	c.Set(auditActorKey, [3]string{kind, id, name})
}

// SetErrorCode records the stable code of the error a dialect answered, for the audit entry.
func SetErrorCode(c *gin.Context, code string) { c.Set(errorCodeKey, code) }

// pathResource is the resource a path names: the path without /api/v1/ and its slashes at the ends.
func pathResource(p string) string {
	return strings.Trim(strings.TrimPrefix(p, "/api/v1/"), "/")
}

// auditing writes the audit entry of a call of op once it is answered: who (the principal, else the actor a
// handler named, else anonymous), the account, the operation, the resource, the outcome (status and error code),
// the time and the client's address. No body, query string or header is kept: credentials never reach it. The
// entry of an operation that may change something is written before the answer leaves.
func auditing(rec AuditRecorder, op Operation) gin.HandlerFunc {
	name := op.Name
	change := !safeMethod(op.Method) && op.Permission != access.Read && op.Permission != access.Test
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		e := audit.Entry{ID: domain.NewID(), Time: start, Source: audit.SourceControlPlane, AccountID: AccountOf(c),
			Operation: name, Status: c.Writer.Status(), ErrorCode: c.GetString(errorCodeKey), ClientAddr: ClientAddr(c),
			ActorKind: audit.ActorAnonymous}
		if p := PrincipalOf(c); p != nil {
			e.ActorKind, e.ActorID, e.ActorName = string(p.Kind()), p.ID(), p.Name()
		} else if v, ok := c.Get(auditActorKey); ok {
			a := v.([3]string)
			e.ActorKind, e.ActorID, e.ActorName = a[0], a[1], a[2]
		}
		if r, ok := c.Get(auditResourceKey); ok {
			e.Resource = r.(string)
		} else {
			e.Resource = pathResource(c.Request.URL.Path)
		}
		_ = rec.Record(c.Request.Context(), e, change) // a failure is logged by the recorder
	}
}
