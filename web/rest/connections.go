package rest

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/web"
)

// Connection authorizes the calls of API destinations, in the shape of Amazon EventBridge's CreateConnection.
// Secrets (password, apiKeyValue, clientSecret and the value of every parameter with isValueSecret) are
// write-only: they are stored encrypted and never answered — answers omit them. A PUT or PATCH that omits a
// secret keeps the stored one.
type Connection struct {
	// Name may be absent in a PUT, which takes it from the path; when present it must equal the path's.
	Name        string `json:"name" example:"shop-api"`
	Description string `json:"description" example:"the shop's REST API"`
	// AuthorizationType selects the member of authParameters that is required (the others must be absent).
	AuthorizationType string                   `json:"authorizationType" enums:"BASIC,API_KEY,OAUTH_CLIENT_CREDENTIALS" example:"API_KEY"`
	AuthParameters    ConnectionAuthParameters `json:"authParameters"`
	// State is AUTHORIZED, or DEAUTHORIZED once POST /api/v1/connections/{connection}/deauthorize dropped its
	// secrets: the targets of its API destinations then dead-letter their events until a PUT or PATCH gives the
	// secrets again.
	State string `json:"state" enums:"AUTHORIZED,DEAUTHORIZED" readonly:"true" example:"AUTHORIZED"`
	// AuthorizedAt is when it last became AUTHORIZED.
	AuthorizedAt time.Time `json:"authorizedAt" readonly:"true"`
	// DeauthorizedAt is when it became DEAUTHORIZED; absent while it is AUTHORIZED.
	DeauthorizedAt *time.Time `json:"deauthorizedAt,omitempty" readonly:"true"`
	CreatedAt      time.Time  `json:"createdAt" readonly:"true"`
	UpdatedAt      time.Time  `json:"updatedAt" readonly:"true"`
} //@name Connection

// ConnectionAuthParameters holds the parameters of the connection's authorization type, and parameters added to
// every call.
type ConnectionAuthParameters struct {
	BasicAuthParameters      *BasicAuthParameters      `json:"basicAuthParameters,omitempty"`
	APIKeyAuthParameters     *APIKeyAuthParameters     `json:"apiKeyAuthParameters,omitempty"`
	OAuthParameters          *OAuthParameters          `json:"oauthParameters,omitempty"`
	InvocationHTTPParameters *ConnectionHTTPParameters `json:"invocationHttpParameters,omitempty"`
} //@name ConnectionAuthParameters

// BasicAuthParameters is HTTP basic authentication.
type BasicAuthParameters struct {
	Username string `json:"username" example:"shop"`
	// Password is write-only: required on create, never answered; omitted in a PUT or PATCH, it is kept.
	Password string `json:"password,omitempty" example:"s3cret"`
} //@name BasicAuthParameters

// APIKeyAuthParameters is a key sent in a header.
type APIKeyAuthParameters struct {
	// APIKeyName is the name of the header.
	APIKeyName string `json:"apiKeyName" example:"X-Api-Key"`
	// APIKeyValue is write-only: required on create, never answered; omitted in a PUT or PATCH, it is kept.
	APIKeyValue string `json:"apiKeyValue,omitempty" example:"k-123"`
} //@name ApiKeyAuthParameters

// OAuthParameters is the OAuth 2.0 client-credentials grant that gets the token of the calls.
type OAuthParameters struct {
	// AuthorizationEndpoint is the token endpoint, an absolute http or https URL.
	AuthorizationEndpoint string                    `json:"authorizationEndpoint" example:"https://auth.example.com/oauth2/token"`
	HTTPMethod            string                    `json:"httpMethod" enums:"GET,POST,PUT" example:"POST"`
	ClientParameters      OAuthClientParameters     `json:"clientParameters"`
	Scopes                []string                  `json:"scopes,omitempty" example:"orders.read"`
	OAuthHTTPParameters   *ConnectionHTTPParameters `json:"oauthHttpParameters,omitempty"`
} //@name OAuthParameters

// OAuthClientParameters identify the client to the token endpoint.
type OAuthClientParameters struct {
	ClientID string `json:"clientId" example:"shop-client"`
	// ClientSecret is write-only: required on create, never answered; omitted in a PUT or PATCH, it is kept.
	ClientSecret string `json:"clientSecret,omitempty" example:"cs-123"`
} //@name OAuthClientParameters

// ConnectionHTTPParameters are added to a request: headers, query string parameters and body parameters, at
// most 50 of each.
type ConnectionHTTPParameters struct {
	HeaderParameters      []ConnectionParameter `json:"headerParameters,omitempty"`
	QueryStringParameters []ConnectionParameter `json:"queryStringParameters,omitempty"`
	BodyParameters        []ConnectionParameter `json:"bodyParameters,omitempty"`
} //@name ConnectionHttpParameters

// ConnectionParameter is a key and its value. The value of a parameter with isValueSecret is write-only (never
// answered; omitted in a PUT or PATCH, the stored value of the secret parameter with the same key is kept).
type ConnectionParameter struct {
	Key           string `json:"key" example:"X-Team"`
	Value         string `json:"value,omitempty" example:"shop"`
	IsValueSecret bool   `json:"isValueSecret,omitempty"`
} //@name ConnectionParameter

// ConnectionList is one page of connections.
type ConnectionList struct {
	Connections []Connection `json:"connections"`
	// NextToken asks for the next page; absent on the last page.
	NextToken string `json:"nextToken,omitempty"`
} //@name ConnectionList

// ConnectionPatch changes a connection: the members given are replaced, the others kept. A member of
// authParameters replaces that member as a whole (secrets omitted in it are kept); changing authorizationType
// drops the parameters of the former type and requires those of the new one.
type ConnectionPatch struct {
	Description       *string                   `json:"description,omitempty" example:"the shop's REST API"`
	AuthorizationType *string                   `json:"authorizationType,omitempty" enums:"BASIC,API_KEY,OAUTH_CLIENT_CREDENTIALS"`
	AuthParameters    *ConnectionAuthParameters `json:"authParameters,omitempty"`
} //@name ConnectionPatch

func paramsIn(l []ConnectionParameter) []connection.Parameter {
	if len(l) == 0 {
		return nil
	}
	out := make([]connection.Parameter, len(l))
	for i, p := range l {
		out[i] = connection.Parameter{Key: p.Key, Value: p.Value, IsValueSecret: p.IsValueSecret}
	}
	return out
}

func (p *ConnectionHTTPParameters) domain() connection.HTTPParameters {
	if p == nil {
		return connection.HTTPParameters{}
	}
	return connection.HTTPParameters{HeaderParameters: paramsIn(p.HeaderParameters),
		QueryStringParameters: paramsIn(p.QueryStringParameters), BodyParameters: paramsIn(p.BodyParameters)}
}

// auth returns the domain form of the authorization members.
func (p ConnectionAuthParameters) auth() (*connection.BasicAuth, *connection.APIKeyAuth, *connection.OAuthParameters) {
	var (
		b *connection.BasicAuth
		k *connection.APIKeyAuth
		o *connection.OAuthParameters
	)
	if p.BasicAuthParameters != nil {
		b = &connection.BasicAuth{Username: p.BasicAuthParameters.Username, Password: p.BasicAuthParameters.Password}
	}
	if p.APIKeyAuthParameters != nil {
		k = &connection.APIKeyAuth{APIKeyName: p.APIKeyAuthParameters.APIKeyName, APIKeyValue: p.APIKeyAuthParameters.APIKeyValue}
	}
	if in := p.OAuthParameters; in != nil {
		o = &connection.OAuthParameters{AuthorizationEndpoint: in.AuthorizationEndpoint, HTTPMethod: in.HTTPMethod,
			ClientID: in.ClientParameters.ClientID, ClientSecret: in.ClientParameters.ClientSecret, Scopes: in.Scopes,
			HTTPParameters: in.OAuthHTTPParameters.domain()}
	}
	return b, k, o
}

// Spec is the domain form of the connection (the RocketMQ dialect converts its connections with it too).
func (in Connection) Spec() connection.Spec {
	s := connection.Spec{Name: in.Name, Description: in.Description, AuthorizationType: connection.AuthorizationType(in.AuthorizationType),
		InvocationHTTPParameters: in.AuthParameters.InvocationHTTPParameters.domain()}
	s.Basic, s.APIKey, s.OAuth = in.AuthParameters.auth()
	return s
}

// Patch is the domain form of the change.
func (in ConnectionPatch) Patch() connection.Patch {
	p := connection.Patch{Description: in.Description}
	if in.AuthorizationType != nil {
		t := connection.AuthorizationType(*in.AuthorizationType)
		p.AuthorizationType = &t
	}
	if ap := in.AuthParameters; ap != nil {
		p.Basic, p.APIKey, p.OAuth = ap.auth()
		if ap.InvocationHTTPParameters != nil {
			inv := ap.InvocationHTTPParameters.domain()
			p.InvocationHTTPParameters = &inv
		}
	}
	return p
}

func paramsOut(l []connection.Parameter) []ConnectionParameter {
	if len(l) == 0 {
		return nil
	}
	out := make([]ConnectionParameter, len(l))
	for i, p := range l {
		out[i] = ConnectionParameter{Key: p.Key, Value: p.Value, IsValueSecret: p.IsValueSecret}
	}
	return out
}

func httpParamsOut(p connection.HTTPParameters) *ConnectionHTTPParameters {
	if p.IsZero() {
		return nil
	}
	return &ConnectionHTTPParameters{HeaderParameters: paramsOut(p.HeaderParameters),
		QueryStringParameters: paramsOut(p.QueryStringParameters), BodyParameters: paramsOut(p.BodyParameters)}
}

// ConnectionOf answers a connection without its secrets (the redacted declaration has them empty, and the
// members that hold them are omitted when empty).
func ConnectionOf(c *connection.Connection) Connection {
	s := c.Redacted()
	out := Connection{Name: c.Name(), Description: c.Description(), AuthorizationType: string(c.AuthorizationType()),
		State: string(c.State()), AuthorizedAt: c.AuthorizedAt(), CreatedAt: c.CreatedAt(), UpdatedAt: c.UpdatedAt()}
	if t := c.DeauthorizedAt(); !t.IsZero() {
		out.DeauthorizedAt = &t
	}
	if s.Basic != nil {
		out.AuthParameters.BasicAuthParameters = &BasicAuthParameters{Username: s.Basic.Username}
	}
	if s.APIKey != nil {
		out.AuthParameters.APIKeyAuthParameters = &APIKeyAuthParameters{APIKeyName: s.APIKey.APIKeyName}
	}
	if o := s.OAuth; o != nil {
		out.AuthParameters.OAuthParameters = &OAuthParameters{AuthorizationEndpoint: o.AuthorizationEndpoint, HTTPMethod: o.HTTPMethod,
			ClientParameters: OAuthClientParameters{ClientID: o.ClientID}, Scopes: o.Scopes, OAuthHTTPParameters: httpParamsOut(o.HTTPParameters)}
	}
	out.AuthParameters.InvocationHTTPParameters = httpParamsOut(s.InvocationHTTPParameters)
	return out
}

// listConnections answers a page of the account's connections, ordered by name.
//
//	@Summary	List connections
//	@Tags		connections
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		limit			query		int		false	"page size (default 50)"
//	@Param		nextToken		query		string	false	"token of the next page from the previous answer"
//	@Success	200				{object}	ConnectionList
//	@Failure	400				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/connections [get]
func (a *api) listConnections(c *gin.Context) (int, any, error) {
	page, err := web.PageOf(c)
	if err != nil {
		return 0, nil, err
	}
	cs, next, err := a.s.Connections.List(c.Request.Context(), web.AccountOf(c), page)
	if err != nil {
		return 0, nil, err
	}
	out := ConnectionList{Connections: make([]Connection, 0, len(cs)), NextToken: next}
	for _, conn := range cs {
		out.Connections = append(out.Connections, ConnectionOf(conn))
	}
	return http.StatusOK, out, nil
}

// createConnection creates a connection; its secrets are stored encrypted and never answered.
//
//	@Summary	Create a connection
//	@Tags		connections
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string		false	"account (default: the caller's own)"
//	@Param		connection		body		Connection	true	"the connection"
//	@Success	201				{object}	Connection	"the connection, without its secrets"
//	@Failure	400				{object}	web.Problem		"invalid input (ValidationError, MalformedRequest)"
//	@Failure	409				{object}	web.Problem		"ConnectionAlreadyExists, ConnectionQuotaExceeded"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/connections [post]
func (a *api) createConnection(c *gin.Context, in *Connection) (int, any, error) {
	conn, err := a.s.Connections.Create(c.Request.Context(), web.AccountOf(c), in.Spec())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, ConnectionOf(conn), nil
}

// getConnection answers one connection without its secrets.
//
//	@Summary	Get a connection
//	@Tags		connections
//	@Produce	json
//	@Param		X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param		connection		path		string	true	"connection name"
//	@Success	200				{object}	Connection
//	@Failure	404				{object}	web.Problem	"ConnectionNotFound"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/connections/{connection} [get]
func (a *api) getConnection(c *gin.Context) (int, any, error) {
	conn, err := a.s.Connections.Get(c.Request.Context(), web.AccountOf(c), c.Param("connection"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ConnectionOf(conn), nil
}

// putConnection creates the connection (201) or replaces it (200); secrets omitted are kept.
//
//	@Summary	Create or replace a connection
//	@Tags		connections
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string		false	"account (default: the caller's own)"
//	@Param		connection		path		string		true	"connection name"
//	@Param		body			body		Connection	true	"the connection; its name may be absent"
//	@Success	200				{object}	Connection	"replaced"
//	@Success	201				{object}	Connection	"created"
//	@Failure	400				{object}	web.Problem		"invalid input (ValidationError, MalformedRequest)"
//	@Failure	409				{object}	web.Problem		"ConnectionQuotaExceeded"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/connections/{connection} [put]
func (a *api) putConnection(c *gin.Context, in *Connection) (int, any, error) {
	name := c.Param("connection")
	if in.Name != "" && in.Name != name {
		return 0, nil, domain.Invalid("name", "name %q differs from the connection %q of the path; connections cannot be renamed", in.Name, name)
	}
	in.Name = name
	conn, created, err := a.s.Connections.Put(c.Request.Context(), web.AccountOf(c), in.Spec())
	if err != nil {
		return 0, nil, err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return status, ConnectionOf(conn), nil
}

// patchConnection changes the members of a connection that the body gives.
//
//	@Summary	Change a connection
//	@Tags		connections
//	@Accept		json
//	@Produce	json
//	@Param		X-Account-Id	header		string			false	"account (default: the caller's own)"
//	@Param		connection		path		string			true	"connection name"
//	@Param		patch			body		ConnectionPatch	true	"the members to change"
//	@Success	200				{object}	Connection
//	@Failure	400				{object}	web.Problem	"invalid input (ValidationError, MalformedRequest)"
//	@Failure	404				{object}	web.Problem	"ConnectionNotFound"
//	@Failure	413				{object}	web.Problem
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/connections/{connection} [patch]
func (a *api) patchConnection(c *gin.Context, in *ConnectionPatch) (int, any, error) {
	conn, err := a.s.Connections.Patch(c.Request.Context(), web.AccountOf(c), c.Param("connection"), in.Patch())
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ConnectionOf(conn), nil
}

// deauthorizeConnection drops the connection's secrets and makes it DEAUTHORIZED.
//
//	@Summary		Deauthorize a connection
//	@Description	Drops the connection's secrets (its password, API key value, client secret and secret parameter values:
//	@Description	gone, not kept aside) and makes it DEAUTHORIZED. The targets of its API destinations then send nothing and
//	@Description	dead-letter every event with the reason, from the runtime adapter's next reconciliation on (within
//	@Description	--reconcile-interval). A PUT or PATCH that gives every secret again makes it AUTHORIZED; one that gives none
//	@Description	keeps it DEAUTHORIZED. Deauthorizing a DEAUTHORIZED connection changes nothing.
//	@Tags			connections
//	@Produce		json
//	@Param			X-Account-Id	header		string	false	"account (default: the caller's own)"
//	@Param			connection		path		string	true	"connection name"
//	@Success		200				{object}	Connection
//	@Failure		404				{object}	web.Problem	"ConnectionNotFound"
//	@Failure		401				{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure		403				{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router			/api/v1/connections/{connection}/deauthorize [post]
func (a *api) deauthorizeConnection(c *gin.Context) (int, any, error) {
	conn, err := a.s.Connections.Deauthorize(c.Request.Context(), web.AccountOf(c), c.Param("connection"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ConnectionOf(conn), nil
}

// deleteConnection deletes a connection that no API destination uses.
//
//	@Summary	Delete a connection
//	@Tags		connections
//	@Param		X-Account-Id	header	string	false	"account (default: the caller's own)"
//	@Param		connection		path	string	true	"connection name"
//	@Success	204
//	@Failure	404	{object}	web.Problem	"ConnectionNotFound"
//	@Failure	409	{object}	web.Problem	"ConnectionInUse: API destinations use it (named in the detail)"
//	@Failure	401	{object}	web.Problem	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	web.Problem	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api/v1/connections/{connection} [delete]
func (a *api) deleteConnection(c *gin.Context) (int, any, error) {
	if err := a.s.Connections.Delete(c.Request.Context(), web.AccountOf(c), c.Param("connection")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
