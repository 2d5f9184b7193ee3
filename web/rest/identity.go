package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/access"
	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apikey"
	"github.com/eventbridge-go/eventbridge/domain/user"
	"github.com/eventbridge-go/eventbridge/web"
)

// Account owns buses, rules, targets, sources, connections, API destinations, members and API keys.
type Account struct {
	// ID is 1 to 32 characters of a-z and 0-9.
	ID        string    `json:"id" example:"shop"`
	CreatedAt time.Time `json:"createdAt" readonly:"true"`
	// Limits are the account's own limits; a 0 is the installation's default.
	Limits AccountLimits `json:"limits"`
} //@name Account

// AccountLimits are what an instance administrator sets for one account.
type AccountLimits struct {
	// PutEventsPerSecond is the events per second the account may put, every dialect and webhook together, per
	// replica of the control plane; 0 is the installation's --put-events-rate. Over it, PutEvents answers 429
	// PutEventsRateExceeded with Retry-After.
	PutEventsPerSecond int `json:"putEventsPerSecond" example:"10000" minimum:"0" maximum:"1000000"`
} //@name AccountLimits

// AccountPatch changes an account: what it holds is set, what it leaves out is kept.
type AccountPatch struct {
	Limits *AccountLimits `json:"limits"`
} //@name AccountPatch

// AccountList is one page of accounts.
type AccountList struct {
	Accounts  []Account `json:"accounts"`
	NextToken string    `json:"nextToken,omitempty"`
} //@name AccountList

func accountOf(a *account.Account) Account {
	return Account{ID: a.ID(), CreatedAt: a.CreatedAt(), Limits: AccountLimits{PutEventsPerSecond: a.Limits().PutEventsPerSecond}}
}

// listAccounts answers a page of the installation's accounts, ordered by id.
//
//	@Summary	List accounts (instance administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		limit		query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken	query		string	false	"token of the next page from the previous answer"
//	@Success	200			{object}	AccountList
//	@Failure	400			{object}	web.Problem
//	@Failure	401			{object}	web.Problem	"Unauthenticated"
//	@Failure	403			{object}	web.Problem	"Forbidden: not an instance administrator"
//	@Router		/api/v1/accounts [get]
func (a *api) listAccounts(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	as, next, err := a.s.Accounts.List(c.Request.Context(), page)
	if err != nil {
		return 0, nil, err
	}
	out := AccountList{Accounts: make([]Account, 0, len(as)), NextToken: next}
	for _, acc := range as {
		out.Accounts = append(out.Accounts, accountOf(acc))
	}
	return http.StatusOK, out, nil
}

// createAccount creates an account.
//
//	@Summary	Create an account (instance administrators)
//	@Tags		identity
//	@Accept		json
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		account	body		Account	true	"the account: its id"
//	@Success	201		{object}	Account
//	@Failure	400		{object}	web.Problem	"ValidationError"
//	@Failure	401		{object}	web.Problem	"Unauthenticated"
//	@Failure	403		{object}	web.Problem	"Forbidden"
//	@Failure	409		{object}	web.Problem	"AccountAlreadyExists"
//	@Router		/api/v1/accounts [post]
func (a *api) createAccount(c *gin.Context, in *Account) (int, any, error) {
	limits := account.Limits{PutEventsPerSecond: in.Limits.PutEventsPerSecond}
	if err := limits.Validate(); err != nil {
		return 0, nil, err
	}
	acc, err := a.s.Accounts.Create(c.Request.Context(), in.ID)
	if err != nil {
		return 0, nil, err
	}
	if limits != (account.Limits{}) {
		if acc, err = a.s.Accounts.SetLimits(c.Request.Context(), acc.ID(), limits); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusCreated, accountOf(acc), nil
}

// patchAccount changes an account's limits.
//
//	@Summary		Change an account's limits (instance administrators)
//	@Description	limits.putEventsPerSecond: the events per second the account may put (0: the installation's default). Each replica of the control plane believes an account's limits for 5 seconds after reading them.
//	@Tags			identity
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			account	path		string			true	"account id"
//	@Param			body	body		AccountPatch	true	"what to change"
//	@Success		200		{object}	Account
//	@Failure		400		{object}	web.Problem	"ValidationError: limits.putEventsPerSecond"
//	@Failure		401		{object}	web.Problem	"Unauthenticated"
//	@Failure		403		{object}	web.Problem	"Forbidden: not an instance administrator"
//	@Failure		404		{object}	web.Problem	"AccountNotFound"
//	@Router			/api/v1/accounts/{account} [patch]
func (a *api) patchAccount(c *gin.Context, in *AccountPatch) (int, any, error) {
	acc, err := a.s.Accounts.Get(c.Request.Context(), c.Param("account"))
	if err != nil {
		return 0, nil, err
	}
	if in.Limits != nil {
		if acc, err = a.s.Accounts.SetLimits(c.Request.Context(), acc.ID(), account.Limits{PutEventsPerSecond: in.Limits.PutEventsPerSecond}); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusOK, accountOf(acc), nil
}

// getAccount answers one account.
//
//	@Summary	Get an account (instance administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		account	path		string	true	"account id"
//	@Success	200		{object}	Account
//	@Failure	401		{object}	web.Problem	"Unauthenticated"
//	@Failure	403		{object}	web.Problem	"Forbidden"
//	@Failure	404		{object}	web.Problem	"AccountNotFound"
//	@Router		/api/v1/accounts/{account} [get]
func (a *api) getAccount(c *gin.Context) (int, any, error) {
	acc, err := a.s.Accounts.Get(c.Request.Context(), c.Param("account"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, accountOf(acc), nil
}

// deleteAccount deletes an account and everything it owns: buses with their rules, targets, sources, streams and
// connectors, connections, API destinations, event types, dead letters, members and API keys.
//
//	@Summary		Delete an account and everything it owns (instance administrators)
//	@Description	The confirm parameter must repeat the account's id. Deleting cannot be undone.
//	@Tags			identity
//	@Produce		json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Param			account	path	string	true	"account id"
//	@Param			confirm	query	string	true	"the account's id again"
//	@Success		204
//	@Failure		400	{object}	web.Problem	"ValidationError: confirm"
//	@Failure		401	{object}	web.Problem	"Unauthenticated"
//	@Failure		403	{object}	web.Problem	"Forbidden"
//	@Failure		404	{object}	web.Problem	"AccountNotFound"
//	@Router			/api/v1/accounts/{account} [delete]
func (a *api) deleteAccount(c *gin.Context) (int, any, error) {
	if err := a.s.Accounts.Delete(c.Request.Context(), c.Param("account"), c.Query("confirm")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// Member is a user's role in an account.
type Member struct {
	Username  string    `json:"username" example:"alice"`
	Role      string    `json:"role" example:"editor" enums:"admin,editor,operator,viewer,publisher"`
	CreatedAt time.Time `json:"createdAt" readonly:"true"`
} //@name Member

// MemberList is one page of an account's members.
type MemberList struct {
	Members   []Member `json:"members"`
	NextToken string   `json:"nextToken,omitempty"`
} //@name MemberList

// MemberRole is the role a member is given (RoleAssignment in the API's spec).
type MemberRole struct {
	Role string `json:"role" example:"editor" enums:"admin,editor,operator,viewer,publisher"`
} //@name RoleAssignment

func memberOf(m user.Membership) Member {
	return Member{Username: m.Username, Role: string(m.Role), CreatedAt: m.CreatedAt}
}

// listMembers answers a page of the account's members, ordered by login name.
//
//	@Summary	List the members of an account (its administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		account		path		string	true	"account id"
//	@Param		limit		query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken	query		string	false	"token of the next page from the previous answer"
//	@Success	200			{object}	MemberList
//	@Failure	401			{object}	web.Problem	"Unauthenticated"
//	@Failure	403			{object}	web.Problem	"Forbidden"
//	@Router		/api/v1/accounts/{account}/members [get]
func (a *api) listMembers(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	ms, next, err := a.s.Users.Members(c.Request.Context(), web.AccountOf(c), page)
	if err != nil {
		return 0, nil, err
	}
	out := MemberList{Members: make([]Member, 0, len(ms)), NextToken: next}
	for _, m := range ms {
		out.Members = append(out.Members, memberOf(m))
	}
	return http.StatusOK, out, nil
}

// putMember makes a user a member of the account with a role, or changes its role.
//
//	@Summary	Add a member to an account or change its role (its administrators)
//	@Tags		identity
//	@Accept		json
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		account	path		string		true	"account id"
//	@Param		user	path		string		true	"login name"
//	@Param		role	body		MemberRole	true	"the role"
//	@Success	200		{object}	Member		"the role changed"
//	@Success	201		{object}	Member		"the user became a member"
//	@Failure	400		{object}	web.Problem	"ValidationError"
//	@Failure	401		{object}	web.Problem	"Unauthenticated"
//	@Failure	403		{object}	web.Problem	"Forbidden"
//	@Failure	404		{object}	web.Problem	"UserNotFound"
//	@Router		/api/v1/accounts/{account}/members/{user} [put]
func (a *api) putMember(c *gin.Context, in *MemberRole) (int, any, error) {
	m, created, err := a.s.Users.SetMember(c.Request.Context(), web.AccountOf(c), c.Param("user"), access.Role(in.Role))
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, memberOf(m), nil
}

// deleteMember ends a membership.
//
//	@Summary	Remove a member from an account (its administrators)
//	@Tags		identity
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		account	path	string	true	"account id"
//	@Param		user	path	string	true	"login name"
//	@Success	204
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	403	{object}	web.Problem	"Forbidden"
//	@Failure	404	{object}	web.Problem	"UserNotFound, MemberNotFound"
//	@Router		/api/v1/accounts/{account}/members/{user} [delete]
func (a *api) deleteMember(c *gin.Context) (int, any, error) {
	if err := a.s.Users.RemoveMember(c.Request.Context(), web.AccountOf(c), c.Param("user")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// User is a person who signs in; the password is write-only.
type User struct {
	Username string `json:"username" example:"alice"`
	// Password is write-only: 8 to 256 characters, never answered.
	Password      string    `json:"password,omitempty" example:"correct horse battery staple"`
	InstanceAdmin bool      `json:"instanceAdmin"`
	Disabled      bool      `json:"disabled" readonly:"true"`
	CreatedAt     time.Time `json:"createdAt" readonly:"true"`
	UpdatedAt     time.Time `json:"updatedAt" readonly:"true"`
	// Memberships are the accounts the user is a member of, with its role (answers of a single user).
	Memberships []UserMembership `json:"memberships,omitempty" readonly:"true"`
} //@name User

// UserMembership is one account of a user and its role there.
type UserMembership struct {
	Account string `json:"account" example:"shop"`
	Role    string `json:"role" example:"editor"`
} //@name UserMembership

// UserList is one page of users.
type UserList struct {
	Users     []User `json:"users"`
	NextToken string `json:"nextToken,omitempty"`
} //@name UserList

// UserPatch changes a user: the fields given are replaced.
type UserPatch struct {
	Password      *string `json:"password,omitempty"`
	Disabled      *bool   `json:"disabled,omitempty"`
	InstanceAdmin *bool   `json:"instanceAdmin,omitempty"`
} //@name UserPatch

func userOf(u *user.User, ms []user.Membership) User {
	out := User{Username: u.Username(), InstanceAdmin: u.InstanceAdmin(), Disabled: u.Disabled(), CreatedAt: u.CreatedAt(),
		UpdatedAt: u.UpdatedAt()}
	for _, m := range ms {
		out.Memberships = append(out.Memberships, UserMembership{Account: m.AccountID, Role: string(m.Role)})
	}
	return out
}

// listUsers answers a page of users, ordered by login name.
//
//	@Summary	List users (instance administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		limit		query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken	query		string	false	"token of the next page from the previous answer"
//	@Success	200			{object}	UserList
//	@Failure	401			{object}	web.Problem	"Unauthenticated"
//	@Failure	403			{object}	web.Problem	"Forbidden"
//	@Router		/api/v1/users [get]
func (a *api) listUsers(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	us, next, err := a.s.Users.List(c.Request.Context(), page)
	if err != nil {
		return 0, nil, err
	}
	out := UserList{Users: make([]User, 0, len(us)), NextToken: next}
	for _, u := range us {
		out.Users = append(out.Users, userOf(u, nil))
	}
	return http.StatusOK, out, nil
}

// createUser creates a user.
//
//	@Summary	Create a user (instance administrators)
//	@Tags		identity
//	@Accept		json
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		user	body		User	true	"login name, password and whether an instance administrator"
//	@Success	201		{object}	User
//	@Failure	400		{object}	web.Problem	"ValidationError"
//	@Failure	401		{object}	web.Problem	"Unauthenticated"
//	@Failure	403		{object}	web.Problem	"Forbidden"
//	@Failure	409		{object}	web.Problem	"UserAlreadyExists"
//	@Router		/api/v1/users [post]
func (a *api) createUser(c *gin.Context, in *User) (int, any, error) {
	u, err := a.s.Users.Create(c.Request.Context(), user.Spec{Username: in.Username, Password: in.Password, InstanceAdmin: in.InstanceAdmin})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, userOf(u, nil), nil
}

// getUser answers one user with its memberships.
//
//	@Summary	Get a user (instance administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		user	path		string	true	"login name"
//	@Success	200		{object}	User
//	@Failure	401		{object}	web.Problem	"Unauthenticated"
//	@Failure	403		{object}	web.Problem	"Forbidden"
//	@Failure	404		{object}	web.Problem	"UserNotFound"
//	@Router		/api/v1/users/{user} [get]
func (a *api) getUser(c *gin.Context) (int, any, error) {
	ctx := c.Request.Context()
	u, err := a.s.Users.Get(ctx, c.Param("user"))
	if err != nil {
		return 0, nil, err
	}
	ms, err := a.s.Users.Memberships(ctx, u.Username())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, userOf(u, ms), nil
}

// patchUser changes a user's password, disabled flag or instance-administrator flag.
//
//	@Summary		Change a user (instance administrators)
//	@Description	The last enabled instance administrator cannot be disabled or demoted (LastInstanceAdmin).
//	@Tags			identity
//	@Accept			json
//	@Produce		json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Param			user	path		string		true	"login name"
//	@Param			patch	body		UserPatch	true	"the fields to change"
//	@Success		200		{object}	User
//	@Failure		400		{object}	web.Problem	"ValidationError"
//	@Failure		401		{object}	web.Problem	"Unauthenticated"
//	@Failure		403		{object}	web.Problem	"Forbidden"
//	@Failure		404		{object}	web.Problem	"UserNotFound"
//	@Failure		409		{object}	web.Problem	"LastInstanceAdmin"
//	@Router			/api/v1/users/{user} [patch]
func (a *api) patchUser(c *gin.Context, in *UserPatch) (int, any, error) {
	u, err := a.s.Users.Patch(c.Request.Context(), c.Param("user"),
		user.Patch{Password: in.Password, Disabled: in.Disabled, InstanceAdmin: in.InstanceAdmin})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, userOf(u, nil), nil
}

// deleteUser deletes a user and its memberships.
//
//	@Summary	Delete a user (instance administrators)
//	@Tags		identity
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		user	path	string	true	"login name"
//	@Success	204
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	403	{object}	web.Problem	"Forbidden"
//	@Failure	404	{object}	web.Problem	"UserNotFound"
//	@Failure	409	{object}	web.Problem	"LastInstanceAdmin"
//	@Router		/api/v1/users/{user} [delete]
func (a *api) deleteUser(c *gin.Context) (int, any, error) {
	if err := a.s.Users.Delete(c.Request.Context(), c.Param("user")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// APIKey is an API key of an account. Its secret is answered once, when it is created.
type APIKey struct {
	ID   string `json:"id" readonly:"true" example:"k3mbwq2x7yfa4d5e"`
	Name string `json:"name" example:"shop-backend"`
	// Role is the key's role in its account.
	Role string `json:"role" example:"publisher" enums:"admin,editor,operator,viewer,publisher"`
	// InstanceAdmin keys are admin in every account and manage accounts and users; only an instance administrator
	// creates one.
	InstanceAdmin bool `json:"instanceAdmin,omitempty"`
	// Buses, when given, are the only buses the key may put events on.
	Buses []string `json:"buses,omitempty" example:"orders"`
	// ExpiresAt ends the key's validity (RFC 3339); absent: never.
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Prefix is the public start of the key (ebk_<id>), to recognise it.
	Prefix     string     `json:"prefix" readonly:"true" example:"ebk_k3mbwq2x7yfa4d5e"`
	CreatedAt  time.Time  `json:"createdAt" readonly:"true"`
	CreatedBy  string     `json:"createdBy" readonly:"true" example:"apiKey admin (k3mbwq2x7yfa4d5e)"`
	LastUsedAt *time.Time `json:"lastUsedAt,omitempty" readonly:"true"`
	// Secret is the whole key, to send as "Authorization: Bearer <secret>": in the answer of its creation only.
	Secret string `json:"secret,omitempty" readonly:"true" example:"ebk_k3mbwq2x7yfa4d5e_Qm9vb3Rz..."`
} //@name ApiKey

// APIKeyList is one page of an account's API keys (not revoked), without secrets.
type APIKeyList struct {
	APIKeys   []APIKey `json:"apiKeys"`
	NextToken string   `json:"nextToken,omitempty"`
} //@name ApiKeyList

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func apiKeyOf(k *apikey.Key) APIKey {
	return APIKey{ID: k.ID(), Name: k.Name(), Role: string(k.Role()), InstanceAdmin: k.InstanceAdmin(), Buses: k.Buses(),
		ExpiresAt: timePtr(k.ExpiresAt()), Prefix: k.DisplayPrefix(), CreatedAt: k.CreatedAt(), CreatedBy: k.CreatedBy(),
		LastUsedAt: timePtr(k.LastUsedAt())}
}

// listAPIKeys answers a page of the account's API keys that are not revoked, without their secrets.
//
//	@Summary	List API keys (account administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's)"
//	@Param		limit			query		int		false	"page size, 1 to 500 (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	APIKeyList
//	@Failure	401				{object}	web.Problem	"Unauthenticated"
//	@Failure	403				{object}	web.Problem	"Forbidden"
//	@Router		/api/v1/api-keys [get]
func (a *api) listAPIKeys(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	ks, next, err := a.s.APIKeys.List(c.Request.Context(), web.AccountOf(c), page)
	if err != nil {
		return 0, nil, err
	}
	out := APIKeyList{APIKeys: make([]APIKey, 0, len(ks)), NextToken: next}
	for _, k := range ks {
		out.APIKeys = append(out.APIKeys, apiKeyOf(k))
	}
	return http.StatusOK, out, nil
}

// createAPIKey creates an API key of the account and answers it with its secret, once.
//
//	@Summary		Create an API key (account administrators)
//	@Description	The answer holds the secret, which is never shown again: store it. Two live keys may share a name,
//	@Description	to rotate one: create the new one, move the clients, revoke the old one.
//	@Tags			identity
//	@Accept			json
//	@Produce		json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's)"
//	@Param			key				body		APIKey	true	"name, role, and optionally expiresAt and buses"
//	@Success		201				{object}	APIKey
//	@Failure		400				{object}	web.Problem	"ValidationError"
//	@Failure		401				{object}	web.Problem	"Unauthenticated"
//	@Failure		403				{object}	web.Problem	"Forbidden"
//	@Failure		409				{object}	web.Problem	"ApiKeyNameInUse"
//	@Router			/api/v1/api-keys [post]
func (a *api) createAPIKey(c *gin.Context, in *APIKey) (int, any, error) {
	if in.ID != "" || in.Secret != "" || in.Prefix != "" {
		return 0, nil, domain.Invalid("id", "id, prefix and secret are made by the server")
	}
	spec := apikey.Spec{Name: in.Name, Role: access.Role(in.Role), InstanceAdmin: in.InstanceAdmin, Buses: in.Buses}
	if in.ExpiresAt != nil {
		spec.ExpiresAt = *in.ExpiresAt
	}
	k, secret, err := a.s.APIKeys.Create(c.Request.Context(), web.PrincipalOf(c), web.AccountOf(c), spec)
	if err != nil {
		return 0, nil, err
	}
	out := apiKeyOf(k)
	out.Secret = secret
	return http.StatusCreated, out, nil
}

// getAPIKey answers one API key of the account, without its secret.
//
//	@Summary	Get an API key (account administrators)
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's)"
//	@Param		key				path		string	true	"key id"
//	@Success	200				{object}	APIKey
//	@Failure	401				{object}	web.Problem	"Unauthenticated"
//	@Failure	403				{object}	web.Problem	"Forbidden"
//	@Failure	404				{object}	web.Problem	"ApiKeyNotFound"
//	@Router		/api/v1/api-keys/{key} [get]
func (a *api) getAPIKey(c *gin.Context) (int, any, error) {
	k, err := a.s.APIKeys.Get(c.Request.Context(), web.AccountOf(c), c.Param("key"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiKeyOf(k), nil
}

// deleteAPIKey revokes an API key: it stops authenticating at once on this replica and within a second on every
// other one.
//
//	@Summary	Revoke an API key (account administrators)
//	@Tags		identity
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's)"
//	@Param		key				path	string	true	"key id"
//	@Success	204
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Failure	403	{object}	web.Problem	"Forbidden"
//	@Failure	404	{object}	web.Problem	"ApiKeyNotFound"
//	@Router		/api/v1/api-keys/{key} [delete]
func (a *api) deleteAPIKey(c *gin.Context) (int, any, error) {
	if err := a.s.APIKeys.Revoke(c.Request.Context(), web.AccountOf(c), c.Param("key")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// Me is the caller: an API key (or, with console sessions, a user), its account and role.
type Me struct {
	// Kind is apiKey or user.
	Kind string `json:"kind" example:"apiKey" enums:"apiKey,user"`
	// ID is the key's or the user's id; Name its name or login name.
	ID   string `json:"id" example:"k3mbwq2x7yfa4d5e"`
	Name string `json:"name" example:"shop-backend"`
	// InstanceAdmin callers are admin in every account and manage accounts and users.
	InstanceAdmin bool `json:"instanceAdmin"`
	// Account is the account of requests that name none (X-Account-Id), and Role the caller's role there.
	Account string `json:"account" example:"shop"`
	Role    string `json:"role" example:"publisher"`
	// Accounts are the accounts the caller is a member of with its role (an instance administrator reaches every
	// account: GET /api/v1/accounts).
	Accounts []UserMembership `json:"accounts"`
	// Buses, for a key restricted to some buses, are those it may put events on.
	Buses []string `json:"buses,omitempty"`
	// Permissions are what the caller may do in Account.
	Permissions []string   `json:"permissions"`
	ExpiresAt   *time.Time `json:"expiresAt,omitempty"`
} //@name Me

// getMe answers who the caller is.
//
//	@Summary	Who am I
//	@Tags		identity
//	@Produce	json
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security	BearerAuth
//	@Success	200	{object}	Me
//	@Failure	401	{object}	web.Problem	"Unauthenticated"
//	@Router		/api/v1/me [get]
func (a *api) getMe(c *gin.Context) (int, any, error) {
	p := web.PrincipalOf(c)
	home := p.HomeAccount()
	role, _ := p.RoleIn(home)
	out := Me{Kind: string(p.Kind()), ID: p.ID(), Name: p.Name(), InstanceAdmin: p.InstanceAdmin(), Account: home,
		Role: string(role), Accounts: []UserMembership{}, Buses: p.Buses(), ExpiresAt: timePtr(p.ExpiresAt()),
		Permissions: []string{}}
	for _, acc := range p.Accounts() {
		r, _ := p.RoleIn(acc)
		out.Accounts = append(out.Accounts, UserMembership{Account: acc, Role: string(r)})
	}
	for _, perm := range access.Permissions {
		if perm != access.Authenticated && p.Can(home, perm) {
			out.Permissions = append(out.Permissions, string(perm))
		}
	}
	return http.StatusOK, out, nil
}
