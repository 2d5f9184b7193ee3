package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/accesskey"
	"github.com/eventbridge-go/eventbridge/web"
)

// AccessKey is an AWS-style access key of an account, for the Amazon EventBridge API's clients (the aws CLI, the
// AWS SDKs, Terraform), which sign their requests with it. Its secret access key is answered once, when it is
// created.
type AccessKey struct {
	AccessKeyID string `json:"accessKeyId" readonly:"true" example:"AKIAMZQWXKD3TRBE7YHA"`
	Name        string `json:"name" example:"terraform"`
	// Role is the key's role in its account.
	Role string `json:"role" example:"editor" enums:"admin,editor,operator,viewer,publisher"`
	// ExpiresAt ends the key's validity (RFC 3339); absent: never.
	ExpiresAt  *time.Time `json:"expiresAt,omitempty"`
	CreatedAt  time.Time  `json:"createdAt" readonly:"true"`
	CreatedBy  string     `json:"createdBy" readonly:"true" example:"apiKey admin (k3mbwq2x7yfa4d5e)"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty" readonly:"true"`
	// SecretAccessKey is in the answer of the key's creation only: keep it then (aws configure).
	SecretAccessKey string `json:"secretAccessKey,omitempty" readonly:"true" example:"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"`
} //@name AccessKey

// AccessKeyList is one page of an account's access keys (not revoked), without secrets.
type AccessKeyList struct {
	AccessKeys []AccessKey `json:"accessKeys"`
	NextToken  string      `json:"nextToken,omitempty"`
} //@name AccessKeyList

func (k AccessKey) auditKey() string { return k.AccessKeyID }

func accessKeyOf(k *accesskey.Key) AccessKey {
	return AccessKey{AccessKeyID: k.ID(), Name: k.Name(), Role: string(k.Role()), ExpiresAt: timePtr(k.ExpiresAt()),
		CreatedAt: k.CreatedAt(), CreatedBy: k.CreatedBy(), LastUsedAt: timePtr(k.LastUsedAt())}
}

// listAccessKeys answers a page of the account's access keys that are not revoked, without their secrets.
//
//	@Summary	List access keys (account administrators)
//	@Tags		identity
//	@Produce	json
//	@Security	BearerAuth
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's)"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	AccessKeyList
//	@Failure	401				{object}	web.Problem	"Unauthenticated"
//	@Failure	403				{object}	web.Problem	"Forbidden"
//	@Router		/api/v1/access-keys [get]
func (a *api) listAccessKeys(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	ks, next, err := a.s.AccessKeys.List(c.Request.Context(), web.AccountOf(c), page)
	if err != nil {
		return 0, nil, err
	}
	out := AccessKeyList{AccessKeys: make([]AccessKey, 0, len(ks)), NextToken: next}
	for _, k := range ks {
		out.AccessKeys = append(out.AccessKeys, accessKeyOf(k))
	}
	return http.StatusOK, out, nil
}

// createAccessKey creates an access key of the account and answers it with its secret access key, once.
//
//	@Summary	Create an access key (account administrators)
//	@Tags		identity
//	@Accept		json
//	@Produce	json
//	@Security	BearerAuth
//	@Param		X-Account-Id	header		string		false	"account (default: the caller's)"
//	@Param		key				body		AccessKey	true	"name, role, and optionally expiresAt"
//	@Success	201				{object}	AccessKey
//	@Failure	400				{object}	web.Problem	"ValidationError naming the field"
//	@Failure	401				{object}	web.Problem	"Unauthenticated"
//	@Failure	403				{object}	web.Problem	"Forbidden"
//	@Failure	409				{object}	web.Problem	"AccessKeyNameInUse: two live keys of that name already"
//	@Router		/api/v1/access-keys [post]
func (a *api) createAccessKey(c *gin.Context, in *AccessKey) (int, any, error) {
	if in.AccessKeyID != "" || in.SecretAccessKey != "" {
		return 0, nil, domain.Invalid("accessKeyId", "accessKeyId and secretAccessKey are made by the server")
	}
	spec := accesskey.Spec{Name: in.Name, Role: access.Role(in.Role)}
	if in.ExpiresAt != nil {
		spec.ExpiresAt = *in.ExpiresAt
	}
	k, secret, err := a.s.AccessKeys.Create(c.Request.Context(), web.PrincipalOf(c), web.AccountOf(c), spec)
	if err != nil {
		return 0, nil, err
	}
	out := accessKeyOf(k)
	out.SecretAccessKey = secret
	return http.StatusCreated, out, nil
}

// getAccessKey answers one access key of the account, without its secret.
//
//	@Summary	Get an access key (account administrators)
//	@Tags		identity
//	@Produce	json
//	@Security	BearerAuth
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's)"
//	@Param		key				path		string	true	"access key id"
//	@Success	200				{object}	AccessKey
//	@Failure	401				{object}	web.Problem	"Unauthenticated"
//	@Failure	403				{object}	web.Problem	"Forbidden"
//	@Failure	404				{object}	web.Problem	"AccessKeyNotFound"
//	@Router		/api/v1/access-keys/{key} [get]
func (a *api) getAccessKey(c *gin.Context) (int, any, error) {
	k, err := a.s.AccessKeys.Get(c.Request.Context(), web.AccountOf(c), c.Param("key"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, accessKeyOf(k), nil
}

// deleteAccessKey revokes an access key: it stops authenticating at once on this replica and within a second on
// every other one.
//
//	@Summary	Revoke an access key (account administrators)
//	@Tags		identity
//	@Security	BearerAuth
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's)"
//	@Param		key				path	string	true	"access key id"
//	@Success	204
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	403	{object}	web.Problem	"Forbidden"
//	@Failure	404	{object}	web.Problem	"AccessKeyNotFound"
//	@Router		/api/v1/access-keys/{key} [delete]
func (a *api) deleteAccessKey(c *gin.Context) (int, any, error) {
	if err := a.s.AccessKeys.Revoke(c.Request.Context(), web.AccountOf(c), c.Param("key")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
