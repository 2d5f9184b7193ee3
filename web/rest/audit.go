package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/audit"
	"github.com/eventbridge-go/eventbridge/web"
)

// The key each created resource's path ends with, for the resource of its audit entry (respond).
func (b Bus) auditKey() string            { return b.Name }
func (r Rule) auditKey() string           { return r.Name }
func (c Connection) auditKey() string     { return c.Name }
func (d APIDestination) auditKey() string { return d.Name }
func (s Source) auditKey() string         { return s.Name }
func (a Account) auditKey() string        { return a.ID }
func (u User) auditKey() string           { return u.Username }
func (k APIKey) auditKey() string         { return k.ID }

// AuditEntry is one audited operation.
type AuditEntry struct {
	ID   string    `json:"id" example:"m2x7yfa4d5ek3qbw"`
	Time time.Time `json:"time"`
	// Source is control-plane, or worker:<id> for the worker REST API's own entries.
	Source string `json:"source" example:"control-plane"`
	// Account is the account the operation acted in; empty for operations of the instance.
	Account string `json:"account,omitempty" example:"shop"`
	// Actor is who called: an API key, a user, anonymous (no valid credentials) or clusterToken (the worker REST API).
	Actor AuditActor `json:"actor"`
	// Operation is the operation's stable name (docs/operations.md).
	Operation string `json:"operation" example:"rules.create"`
	// Resource is what it acted on.
	Resource string `json:"resource" example:"buses/orders/rules/paid"`
	// Outcome is success or failure; Status the HTTP status answered; ErrorCode the error's code.
	Outcome       string `json:"outcome" example:"success" enums:"success,failure"`
	Status        int    `json:"status" example:"201"`
	ErrorCode     string `json:"errorCode,omitempty" example:"RuleAlreadyExists"`
	ClientAddress string `json:"clientAddress,omitempty" example:"192.0.2.10"`
} //@name AuditEntry

// AuditActor is who made an audited call.
type AuditActor struct {
	Kind string `json:"kind" example:"user" enums:"apiKey,accessKey,user,anonymous,clusterToken"`
	ID   string `json:"id,omitempty" example:"u7fa4d5ek3mbwq2x"`
	Name string `json:"name,omitempty" example:"alice"`
} //@name AuditActor

// AuditLog is one page of the audit log, newest first.
type AuditLog struct {
	Entries   []AuditEntry `json:"entries"`
	NextToken string       `json:"nextToken,omitempty"`
} //@name AuditLog

func auditEntryOf(e audit.Entry) AuditEntry {
	return AuditEntry{ID: e.ID, Time: e.Time, Source: e.Source, Account: e.AccountID,
		Actor:     AuditActor{Kind: e.ActorKind, ID: e.ActorID, Name: e.ActorName},
		Operation: e.Operation, Resource: e.Resource, Outcome: e.Outcome, Status: e.Status, ErrorCode: e.ErrorCode,
		ClientAddress: e.ClientAddr}
}

// timeParam reads an RFC 3339 time of the query ("" is zero).
func timeParam(c *gin.Context, name string) (time.Time, error) {
	v := c.Query(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, domain.Invalid(name, "%s %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", name, v)
	}
	return t, nil
}

// listAuditLog answers a page of the audit log of the account, newest first.
//
//	@Summary		List the audit log (account administrators)
//	@Description	One entry per control operation of every API (not PutEvents or webhook intake, which metrics
//	@Description	count), and per call of the worker REST API: who, account, operation, resource, outcome, time and
//	@Description	client address; never a credential. Account administrators read their account's entries; an
//	@Description	instance administrator may add allAccounts=true for every account's and the instance's. Entries
//	@Description	are kept for --audit-retention (90 days by default).
//	@Tags			identity
//	@Produce		json
//	@Security		BearerAuth
//	@Param			from		query		string	false	"entries at or after this RFC 3339 time"
//	@Param			to			query		string	false	"entries before this RFC 3339 time"
//	@Param			actor		query		string	false	"an actor's id or name"
//	@Param			operation	query		string	false	"an operation, or a prefix ending in * (rules.*)"
//	@Param			resource	query		string	false	"a resource, or a prefix ending in * (buses/orders*)"
//	@Param			outcome		query		string	false	"success or failure"
//	@Param			allAccounts	query		bool	false	"every account's entries and the instance's (instance administrators)"
//	@Param			limit		query		int		false	"page size, 1 to 500 (default 50)"
//	@Param			nextToken	query		string	false	"token of the next page from the previous answer"
//	@Success		200			{object}	AuditLog
//	@Failure		400			{object}	web.Problem	"ValidationError"
//	@Failure		401			{object}	web.Problem	"Unauthenticated"
//	@Failure		403			{object}	web.Problem	"Forbidden"
//	@Router			/api/v1/audit-log [get]
func (a *api) listAuditLog(c *gin.Context) (int, any, error) {
	if a.s.AuditLog == nil {
		return 0, nil, domain.ErrUnavailable.With("this server keeps no audit log")
	}
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	f := audit.Filter{AccountID: web.AccountOf(c), Actor: c.Query("actor"), Operation: c.Query("operation"),
		Resource: c.Query("resource"), Outcome: c.Query("outcome")}
	if f.From, err = timeParam(c, "from"); err != nil {
		return 0, nil, err
	}
	if f.To, err = timeParam(c, "to"); err != nil {
		return 0, nil, err
	}
	switch v := c.Query("allAccounts"); v {
	case "", "false":
	case "true":
		if p := web.PrincipalOf(c); !p.InstanceAdmin() {
			return 0, nil, access.ErrForbidden.With("allAccounts is for instance administrators; %s reads the entries of its account", p)
		}
		f.AllAccounts = true
	default:
		return 0, nil, domain.Invalid("allAccounts", "allAccounts %q must be true or false", v)
	}
	entries, next, err := a.s.AuditLog.List(c.Request.Context(), f, page)
	if err != nil {
		return 0, nil, err
	}
	out := AuditLog{Entries: make([]AuditEntry, 0, len(entries)), NextToken: next}
	for _, e := range entries {
		out.Entries = append(out.Entries, auditEntryOf(e))
	}
	return http.StatusOK, out, nil
}
