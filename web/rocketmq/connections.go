package rocketmq

import (
	"context"
	"github.com/eventbridge-go/eventbridge/web"
	"github.com/eventbridge-go/eventbridge/web/rest"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/connection"
)

// Connections and API destinations in RocketMQ EventBridge's shapes: controller/ConnectionController.java and
// ApiDestinationController.java of apache/rocketmq-eventbridge's adapter/api, their dto/connection and
// dto/apidestination classes, and the parameter classes of domain/model/connection/parameter (AuthParameters,
// BasicAuthParameters, ApiKeyAuthParameters, OAuthParameters, ClientParameters, InvocationHttpParameters,
// OAuthHttpParameters, BaseParameter, NetworkParameters) and domain/model/apidestination/parameter
// (HttpApiParameters, ApiParameter); authorizationType takes the values of its AuthorizationTypeEnum and
// networkType those of its NetworkTypeEnum.
//
// Mapping to the domain (the same services as /api/v1):
//   - authParameters.authorizationType BASIC_AUTH, API_KEY_AUTH and OAUTH_AUTH are BASIC, API_KEY and
//     OAUTH_CLIENT_CREDENTIALS (our names are accepted too); answers use RocketMQ EventBridge's.
//   - Secrets (password, apiKeyValue, clientSecret, values of parameters with isValueSecret) are write-only, as on
//     /api/v1: answers omit them, where RocketMQ EventBridge masks them as "**". updateConnection keeps a secret
//     it does not give.
//   - networkParameters: only PUBLIC_NETWORK (or none) maps; PRIVATE_NETWORK (a VPC) is refused.
//   - oauthParameters.scopes is ours (RocketMQ EventBridge has no scopes); clients that do not know it ignore it.
//   - httpApiParameters.endpoint and method are the API destination's invocationEndpoint and httpMethod;
//     apiParameters (typed parameters with defaults) do not map and are refused: path parameters are the
//     endpoint's "*" segments, filled from the event.
//   - updateConnection and updateApiDestination change an existing resource (ConnectionNotExist,
//     ApiDestinationNotExist otherwise); members they do not give are kept.

// Values of RocketMQ EventBridge's AuthorizationTypeEnum and NetworkTypeEnum.
const (
	rmqBasicAuth      = "BASIC_AUTH"
	rmqAPIKeyAuth     = "API_KEY_AUTH"
	rmqOAuthAuth      = "OAUTH_AUTH"
	rmqPublicNetwork  = "PUBLIC_NETWORK"
	rmqPrivateNetwork = "PRIVATE_NETWORK"
)

// Codes of RocketMQ EventBridge for names that break its rules.
var (
	errRMQConnectionNameInvalid     = &domain.Error{Kind: domain.KindConflict, Code: "ConnectionNameInvalid"}
	errRMQAPIDestinationNameInvalid = &domain.Error{Kind: domain.KindConflict, Code: "ApiDestinationNameInvalid"}
)

// rmqAuthTypes maps RocketMQ EventBridge's authorization types to ours.
var rmqAuthTypes = map[string]connection.AuthorizationType{
	rmqBasicAuth: connection.Basic, rmqAPIKeyAuth: connection.APIKey, rmqOAuthAuth: connection.OAuthClientCredentials,
	string(connection.Basic): connection.Basic, string(connection.APIKey): connection.APIKey,
	string(connection.OAuthClientCredentials): connection.OAuthClientCredentials,
}

// rmqAuthTypeOf is RocketMQ EventBridge's name of our authorization type.
func rmqAuthTypeOf(t connection.AuthorizationType) string {
	switch t {
	case connection.Basic:
		return rmqBasicAuth
	case connection.APIKey:
		return rmqAPIKeyAuth
	case connection.OAuthClientCredentials:
		return rmqOAuthAuth
	}
	return string(t)
}

// RocketMQConnectionParameter is a key and its value (RocketMQ EventBridge's BaseParameter). The value of a
// parameter with isValueSecret "true" is write-only: answers omit it.
type RocketMQConnectionParameter struct {
	Key   string `json:"key" example:"X-Team"`
	Value string `json:"value,omitempty" example:"shop"`
	// IsValueSecret is "true" or "false" (RocketMQ EventBridge sends a string; a JSON boolean is read as well).
	IsValueSecret rmqBool `json:"isValueSecret,omitempty" swaggertype:"string" enums:"true,false" example:"false"`
} //@name RocketMQConnectionParameter

// rmqBool is a boolean written as the string "true" or "false", as RocketMQ EventBridge's isValueSecret; it reads
// JSON booleans too.
type rmqBool bool

func (b rmqBool) MarshalJSON() ([]byte, error) {
	if b {
		return []byte(`"true"`), nil
	}
	return []byte(`"false"`), nil
}

func (b *rmqBool) UnmarshalJSON(data []byte) error {
	switch strings.ToLower(strings.Trim(string(data), `"`)) {
	case "true":
		*b = true
	case "false", "", "null":
		*b = false
	default:
		return errRMQInvalid.WithField("isValueSecret").With("isValueSecret must be \"true\" or \"false\", not %s", clip(string(data), 32))
	}
	return nil
}

// clip shortens s to at most n bytes for an error message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// RocketMQHTTPParameters are added to a request (RocketMQ EventBridge's InvocationHttpParameters and
// OAuthHttpParameters).
type RocketMQHTTPParameters struct {
	BodyParameters        []RocketMQConnectionParameter `json:"bodyParameters,omitempty"`
	HeaderParameters      []RocketMQConnectionParameter `json:"headerParameters,omitempty"`
	QueryStringParameters []RocketMQConnectionParameter `json:"queryStringParameters,omitempty"`
} //@name RocketMQHttpParameters

// RocketMQBasicAuthParameters is HTTP basic authentication; password is write-only.
type RocketMQBasicAuthParameters struct {
	Username string `json:"username" example:"shop"`
	Password string `json:"password,omitempty" example:"s3cret"`
} //@name RocketMQBasicAuthParameters

// RocketMQAPIKeyAuthParameters is a key sent in the header apiKeyName; apiKeyValue is write-only.
type RocketMQAPIKeyAuthParameters struct {
	APIKeyName  string `json:"apiKeyName" example:"X-Api-Key"`
	APIKeyValue string `json:"apiKeyValue,omitempty" example:"k-123"`
} //@name RocketMQApiKeyAuthParameters

// RocketMQClientParameters identify the OAuth client; clientSecret is write-only.
type RocketMQClientParameters struct {
	ClientID     string `json:"clientID" example:"shop-client"`
	ClientSecret string `json:"clientSecret,omitempty" example:"cs-123"`
} //@name RocketMQClientParameters

// RocketMQOAuthParameters is the OAuth 2.0 client-credentials grant (RocketMQ EventBridge's OAuthParameters).
type RocketMQOAuthParameters struct {
	AuthorizationEndpoint string                   `json:"authorizationEndpoint" example:"https://auth.example.com/oauth2/token"`
	ClientParameters      RocketMQClientParameters `json:"clientParameters"`
	HTTPMethod            string                   `json:"httpMethod" enums:"GET,POST,PUT" example:"POST"`
	OAuthHTTPParameters   *RocketMQHTTPParameters  `json:"oauthHttpParameters,omitempty"`
	// Scopes is ours (not RocketMQ EventBridge's): the scopes asked of the token endpoint.
	Scopes []string `json:"scopes,omitempty" example:"orders.read"`
} //@name RocketMQOAuthParameters

// RocketMQAuthParameters is the authorization of a connection; authorizationType selects the member required.
type RocketMQAuthParameters struct {
	// AuthorizationType is BASIC_AUTH, API_KEY_AUTH or OAUTH_AUTH (BASIC, API_KEY and OAUTH_CLIENT_CREDENTIALS are
	// read as well).
	AuthorizationType        string                        `json:"authorizationType" enums:"BASIC_AUTH,API_KEY_AUTH,OAUTH_AUTH" example:"API_KEY_AUTH"`
	APIKeyAuthParameters     *RocketMQAPIKeyAuthParameters `json:"apiKeyAuthParameters,omitempty"`
	BasicAuthParameters      *RocketMQBasicAuthParameters  `json:"basicAuthParameters,omitempty"`
	InvocationHTTPParameters *RocketMQHTTPParameters       `json:"invocationHttpParameters,omitempty"`
	OAuthParameters          *RocketMQOAuthParameters      `json:"oauthParameters,omitempty"`
} //@name RocketMQAuthParameters

// RocketMQNetworkParameters is the network of a connection; only PUBLIC_NETWORK is supported.
type RocketMQNetworkParameters struct {
	NetworkType     string `json:"networkType" enums:"PUBLIC_NETWORK" example:"PUBLIC_NETWORK"`
	VpcID           string `json:"vpcId,omitempty"`
	VswitcheID      string `json:"vswitcheId,omitempty"`
	SecurityGroupID string `json:"securityGroupId,omitempty"`
} //@name RocketMQNetworkParameters

// RocketMQConnectionRequest creates or updates a connection (createConnection, updateConnection).
type RocketMQConnectionRequest struct {
	ConnectionName    string                     `json:"connectionName" example:"shop-api"`
	Description       *string                    `json:"description,omitempty" example:"the shop's REST API"`
	NetworkParameters *RocketMQNetworkParameters `json:"networkParameters,omitempty"`
	AuthParameters    *RocketMQAuthParameters    `json:"authParameters,omitempty"`
} //@name RocketMQConnectionRequest

// RocketMQConnectionNameRequest names a connection (getConnection, deleteConnection).
type RocketMQConnectionNameRequest struct {
	ConnectionName string `json:"connectionName" example:"shop-api"`
} //@name RocketMQConnectionNameRequest

// RocketMQCreateConnectionResponse names the connection created.
type RocketMQCreateConnectionResponse struct {
	RequestID      string `json:"requestId"`
	ConnectionName string `json:"connectionName" example:"shop-api"`
} //@name RocketMQCreateConnectionResponse

// RocketMQConnection is a connection without its secrets (RocketMQ EventBridge's ConnectionResponse).
type RocketMQConnection struct {
	ConnectionName    string                    `json:"connectionName" example:"shop-api"`
	Description       string                    `json:"description" example:"the shop's REST API"`
	NetworkParameters RocketMQNetworkParameters `json:"networkParameters"`
	AuthParameters    RocketMQAuthParameters    `json:"authParameters"`
	// GmtCreate is the creation time in milliseconds since the Unix epoch.
	GmtCreate int64 `json:"gmtCreate" example:"1700000000000"`
} //@name RocketMQConnection

// RocketMQGetConnectionResponse holds the connection asked for (a list of one, as RocketMQ EventBridge answers).
type RocketMQGetConnectionResponse struct {
	RequestID   string               `json:"requestId"`
	Connections []RocketMQConnection `json:"connections"`
} //@name RocketMQGetConnectionResponse

// RocketMQListConnectionsRequest asks for a page of the account's connections, ordered by name.
type RocketMQListConnectionsRequest struct {
	ConnectionNamePrefix string `json:"connectionNamePrefix" example:"shop"`
	// NextToken is the decimal offset of the page's first connection; absent for the first page.
	NextToken string `json:"nextToken" example:"50"`
	// MaxResults is the page size, 1 to 100 (0 or absent: 50).
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListConnectionsRequest

// RocketMQListConnectionsResponse is one page of connections.
type RocketMQListConnectionsResponse struct {
	RequestID   string               `json:"requestId"`
	Connections []RocketMQConnection `json:"connections"`
	NextToken   string               `json:"nextToken,omitempty" example:"50"`
	// Total is the number of connections that match the prefix.
	Total      int `json:"total" example:"1"`
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListConnectionsResponse

func rmqParamsIn(l []RocketMQConnectionParameter) []rest.ConnectionParameter {
	if len(l) == 0 {
		return nil
	}
	out := make([]rest.ConnectionParameter, len(l))
	for i, p := range l {
		out[i] = rest.ConnectionParameter{Key: p.Key, Value: p.Value, IsValueSecret: bool(p.IsValueSecret)}
	}
	return out
}

func (p *RocketMQHTTPParameters) v1() *rest.ConnectionHTTPParameters {
	if p == nil {
		return nil
	}
	return &rest.ConnectionHTTPParameters{BodyParameters: rmqParamsIn(p.BodyParameters), HeaderParameters: rmqParamsIn(p.HeaderParameters),
		QueryStringParameters: rmqParamsIn(p.QueryStringParameters)}
}

func rmqParamsOut(l []rest.ConnectionParameter) []RocketMQConnectionParameter {
	if len(l) == 0 {
		return nil
	}
	out := make([]RocketMQConnectionParameter, len(l))
	for i, p := range l {
		out[i] = RocketMQConnectionParameter{Key: p.Key, Value: p.Value, IsValueSecret: rmqBool(p.IsValueSecret)}
	}
	return out
}

func rmqHTTPParamsOut(p *rest.ConnectionHTTPParameters) *RocketMQHTTPParameters {
	if p == nil {
		return nil
	}
	return &RocketMQHTTPParameters{BodyParameters: rmqParamsOut(p.BodyParameters), HeaderParameters: rmqParamsOut(p.HeaderParameters),
		QueryStringParameters: rmqParamsOut(p.QueryStringParameters)}
}

// v1 returns the /api/v1 form of the authorization (whose domain mapping is shared) and its type.
func (p *RocketMQAuthParameters) v1() (rest.ConnectionAuthParameters, connection.AuthorizationType, error) {
	var out rest.ConnectionAuthParameters
	if p == nil {
		return out, "", errRMQInvalid.WithField("authParameters").With("authParameters is required")
	}
	t, ok := rmqAuthTypes[p.AuthorizationType]
	switch {
	case p.AuthorizationType == "":
		return out, "", errRMQInvalid.WithField("authParameters.authorizationType").With(
			"authParameters.authorizationType is required (%s, %s or %s)", rmqBasicAuth, rmqAPIKeyAuth, rmqOAuthAuth)
	case !ok:
		return out, "", errRMQInvalid.WithField("authParameters.authorizationType").With(
			"authParameters.authorizationType must be %s, %s or %s, not %q", rmqBasicAuth, rmqAPIKeyAuth, rmqOAuthAuth, clip(p.AuthorizationType, 64))
	}
	if b := p.BasicAuthParameters; b != nil {
		out.BasicAuthParameters = &rest.BasicAuthParameters{Username: b.Username, Password: b.Password}
	}
	if k := p.APIKeyAuthParameters; k != nil {
		out.APIKeyAuthParameters = &rest.APIKeyAuthParameters{APIKeyName: k.APIKeyName, APIKeyValue: k.APIKeyValue}
	}
	if o := p.OAuthParameters; o != nil {
		out.OAuthParameters = &rest.OAuthParameters{AuthorizationEndpoint: o.AuthorizationEndpoint, HTTPMethod: o.HTTPMethod,
			ClientParameters: rest.OAuthClientParameters{ClientID: o.ClientParameters.ClientID, ClientSecret: o.ClientParameters.ClientSecret},
			Scopes:           o.Scopes, OAuthHTTPParameters: o.OAuthHTTPParameters.v1()}
	}
	out.InvocationHTTPParameters = p.InvocationHTTPParameters.v1()
	return out, t, nil
}

// rmqConnectionOf describes a connection in this API's shape, without its secrets (it is made from /api/v1's
// answer, which has none).
func rmqConnectionOf(c *connection.Connection) RocketMQConnection {
	v := rest.ConnectionOf(c)
	ap := v.AuthParameters
	out := RocketMQConnection{
		ConnectionName: v.Name, Description: v.Description, GmtCreate: v.CreatedAt.UnixMilli(),
		NetworkParameters: RocketMQNetworkParameters{NetworkType: rmqPublicNetwork},
		AuthParameters: RocketMQAuthParameters{AuthorizationType: rmqAuthTypeOf(c.AuthorizationType()),
			InvocationHTTPParameters: rmqHTTPParamsOut(ap.InvocationHTTPParameters)},
	}
	if b := ap.BasicAuthParameters; b != nil {
		out.AuthParameters.BasicAuthParameters = &RocketMQBasicAuthParameters{Username: b.Username}
	}
	if k := ap.APIKeyAuthParameters; k != nil {
		out.AuthParameters.APIKeyAuthParameters = &RocketMQAPIKeyAuthParameters{APIKeyName: k.APIKeyName}
	}
	if o := ap.OAuthParameters; o != nil {
		out.AuthParameters.OAuthParameters = &RocketMQOAuthParameters{AuthorizationEndpoint: o.AuthorizationEndpoint,
			ClientParameters: RocketMQClientParameters{ClientID: o.ClientParameters.ClientID}, HTTPMethod: o.HTTPMethod,
			OAuthHTTPParameters: rmqHTTPParamsOut(o.OAuthHTTPParameters), Scopes: o.Scopes}
	}
	return out
}

// rmqConnectionError names the fields of a connection as this API does.
func rmqConnectionError(err error) error {
	err = renameLeading(err, "authorizationType", "authParameters.authorizationType")
	err = renameLeading(err, "clientParameters.clientId", "clientParameters.clientID")
	return renameLeading(err, "name", "connectionName")
}

// renameLeading renames the field of a domain error from ours to theirs when the field is ours or starts with it
// followed by ".", and the same text where the message names it; other errors are returned as they are.
func renameLeading(err error, ours, theirs string) error {
	de, ok := domain.As(err)
	if !ok {
		return err
	}
	c := *de
	switch {
	case c.Field == ours, strings.HasPrefix(c.Field, ours+"."):
		c.Field = theirs + strings.TrimPrefix(c.Field, ours)
		if strings.HasPrefix(c.Message, ours) {
			c.Message = theirs + strings.TrimPrefix(c.Message, ours)
		}
	case strings.Contains(c.Field, "."+ours):
		c.Field = strings.Replace(c.Field, "."+ours, "."+theirs, 1)
		c.Message = strings.Replace(c.Message, ours, theirs, 1)
	default:
		return err
	}
	return &c
}

// validate checks a createConnection or updateConnection request and checks what this API adds
// to the domain's rules: the name, and the network.
func (in *RocketMQConnectionRequest) validate() error {
	if err := required("connectionName", in.ConnectionName); err != nil {
		return err
	}
	if err := domain.ValidateName("connectionName", in.ConnectionName); err != nil {
		return recode(errRMQConnectionNameInvalid, err)
	}
	if np := in.NetworkParameters; np != nil {
		switch np.NetworkType {
		case "", rmqPublicNetwork, "PublicNetwork":
		case rmqPrivateNetwork, "PrivateNetwork":
			return errRMQInvalid.WithField("networkParameters.networkType").With(
				"networkParameters.networkType %s is not supported: connections call their endpoints over the public network (%s)",
				np.NetworkType, rmqPublicNetwork)
		default:
			return errRMQInvalid.WithField("networkParameters.networkType").With(
				"networkParameters.networkType must be %s, not %q", rmqPublicNetwork, clip(np.NetworkType, 64))
		}
		if np.VpcID != "" || np.VswitcheID != "" || np.SecurityGroupID != "" {
			return errRMQInvalid.WithField("networkParameters").With("networkParameters: vpcId, vswitcheId and securityGroupId are not supported")
		}
	}
	return nil
}

// rmqCreateConnection creates a connection.
//
//	@Summary		Create a connection (RocketMQ EventBridge API)
//	@Description	Creates a connection; authParameters.authorizationType BASIC_AUTH, API_KEY_AUTH or OAUTH_AUTH selects the
//	@Description	member of authParameters that is required. Secrets are stored encrypted and never answered.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQConnectionRequest	true	"the connection"
//	@Success		200						{object}	RocketMQCreateConnectionResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"ConnectionAlreadyExist, ConnectionNameInvalid, ConnectionCountExceedLimit"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/connection/createConnection [post]
func (a *api) rmqCreateConnection(c *gin.Context, in *RocketMQConnectionRequest) (any, error) {
	ap, t, err := in.AuthParameters.v1()
	if err != nil {
		return nil, err
	}
	v1 := rest.Connection{Name: in.ConnectionName, AuthorizationType: string(t), AuthParameters: ap}
	if in.Description != nil {
		v1.Description = *in.Description
	}
	conn, err := a.s.Connections.Create(c.Request.Context(), web.AccountOf(c), v1.Spec())
	if err != nil {
		return nil, rmqConnectionError(err)
	}
	return RocketMQCreateConnectionResponse{RequestID: requestIDOf(c), ConnectionName: conn.Name()}, nil
}

// rmqUpdateConnection changes an existing connection: the members given replace the stored ones (a secret
// omitted is kept; a new authorizationType drops the parameters of the former one).
//
//	@Summary	Update a connection (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string						false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQConnectionRequest	true	"the connection"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"ConnectionNotExist, ConnectionNameInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/connection/updateConnection [post]
func (a *api) rmqUpdateConnection(c *gin.Context, in *RocketMQConnectionRequest) (any, error) {
	patch := rest.ConnectionPatch{Description: in.Description}
	if in.AuthParameters != nil {
		ap, t, err := in.AuthParameters.v1()
		if err != nil {
			return nil, err
		}
		ts := string(t)
		patch.AuthorizationType, patch.AuthParameters = &ts, &ap
	}
	if _, err := a.s.Connections.Patch(c.Request.Context(), web.AccountOf(c), in.ConnectionName, patch.Patch()); err != nil {
		return nil, rmqConnectionError(err)
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// validate checks what a request that names a connection.
func (in *RocketMQConnectionNameRequest) validate() error {
	return required("connectionName", in.ConnectionName)
}

// rmqDeleteConnection deletes a connection that no API destination uses.
//
//	@Summary	Delete a connection (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQConnectionNameRequest	true	"the connection"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"ConnectionNotExist, ConnectionBoundApiDestination"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/connection/deleteConnection [post]
func (a *api) rmqDeleteConnection(c *gin.Context, in *RocketMQConnectionNameRequest) (any, error) {
	if err := a.s.Connections.Delete(c.Request.Context(), web.AccountOf(c), in.ConnectionName); err != nil {
		return nil, err
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// rmqGetConnection answers one connection without its secrets.
//
//	@Summary	Get a connection (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQConnectionNameRequest	true	"the connection"
//	@Success	200						{object}	RocketMQGetConnectionResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"ConnectionNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/connection/getConnection [post]
func (a *api) rmqGetConnection(c *gin.Context, in *RocketMQConnectionNameRequest) (any, error) {
	conn, err := a.s.Connections.Get(c.Request.Context(), web.AccountOf(c), in.ConnectionName)
	if err != nil {
		return nil, err
	}
	return RocketMQGetConnectionResponse{RequestID: requestIDOf(c), Connections: []RocketMQConnection{rmqConnectionOf(conn)}}, nil
}

// rmqListConnections answers a page of the account's connections whose names start with connectionNamePrefix,
// ordered by name.
//
//	@Summary	List connections (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQListConnectionsRequest	true	"the page"
//	@Success	200						{object}	RocketMQListConnectionsResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"LimitSizeInvalid, NextTokenInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/connection/listConnections [post]
func (a *api) rmqListConnections(c *gin.Context, in *RocketMQListConnectionsRequest) (any, error) {
	offset, limit, err := rmqPage(in.NextToken, in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*connection.Connection, string, error) {
		return a.s.Connections.List(ctx, web.AccountOf(c), p)
	})
	if err != nil {
		return nil, err
	}
	all = withPrefix(all, in.ConnectionNamePrefix, (*connection.Connection).Name)
	page, next := pageOfAll(all, offset, limit)
	out := RocketMQListConnectionsResponse{RequestID: requestIDOf(c), Connections: make([]RocketMQConnection, 0, len(page)),
		NextToken: next, Total: len(all), MaxResults: limit}
	for _, conn := range page {
		out.Connections = append(out.Connections, rmqConnectionOf(conn))
	}
	return out, nil
}

// withPrefix returns the items whose name starts with prefix (all of them when it is "").
func withPrefix[T any](all []T, prefix string, name func(T) string) []T {
	if prefix == "" {
		return all
	}
	out := make([]T, 0, len(all))
	for _, x := range all {
		if strings.HasPrefix(name(x), prefix) {
			out = append(out, x)
		}
	}
	return out
}

// RocketMQAPIParameter is a typed parameter of an API destination (RocketMQ EventBridge's ApiParameter); not
// supported: path parameters are the endpoint's "*" segments.
type RocketMQAPIParameter struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Type         string `json:"type"`
	DefaultValue string `json:"defaultValue"`
	In           string `json:"in"`
} //@name RocketMQApiParameter

// RocketMQHTTPAPIParameters is the endpoint of an API destination (RocketMQ EventBridge's HttpApiParameters).
type RocketMQHTTPAPIParameters struct {
	// Endpoint is an absolute http or https URL; each path segment "*" is a path parameter, filled from the event.
	Endpoint string `json:"endpoint" example:"https://api.example.com/orders/*"`
	Method   string `json:"method" enums:"GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS" example:"POST"`
	// APIParameters is not supported (must be absent or empty).
	APIParameters []RocketMQAPIParameter `json:"apiParameters,omitempty"`
} //@name RocketMQHttpApiParameters

// RocketMQAPIDestinationRequest creates or updates an API destination.
type RocketMQAPIDestinationRequest struct {
	APIDestinationName string                     `json:"apiDestinationName" example:"create-order"`
	ConnectionName     string                     `json:"connectionName" example:"shop-api"`
	Description        *string                    `json:"description,omitempty" example:"creates orders in the shop"`
	HTTPAPIParameters  *RocketMQHTTPAPIParameters `json:"httpApiParameters,omitempty"`
	// InvocationRateLimitPerSecond is between 1 and 300 (default 300).
	InvocationRateLimitPerSecond *int `json:"invocationRateLimitPerSecond,omitempty" example:"300"`
} //@name RocketMQApiDestinationRequest

// RocketMQAPIDestinationNameRequest names an API destination (getApiDestination, deleteApiDestination).
type RocketMQAPIDestinationNameRequest struct {
	APIDestinationName string `json:"apiDestinationName" example:"create-order"`
} //@name RocketMQApiDestinationNameRequest

// RocketMQCreateAPIDestinationResponse names the API destination created.
type RocketMQCreateAPIDestinationResponse struct {
	RequestID          string `json:"requestId"`
	APIDestinationName string `json:"apiDestinationName" example:"create-order"`
} //@name RocketMQCreateApiDestinationResponse

// RocketMQAPIDestination is an API destination (RocketMQ EventBridge's ApiDestinationsResponse, with gmtCreate).
type RocketMQAPIDestination struct {
	APIDestinationName           string                    `json:"apiDestinationName" example:"create-order"`
	ConnectionName               string                    `json:"connectionName" example:"shop-api"`
	Description                  string                    `json:"description" example:"creates orders in the shop"`
	HTTPAPIParameters            RocketMQHTTPAPIParameters `json:"httpApiParameters"`
	InvocationRateLimitPerSecond int                       `json:"invocationRateLimitPerSecond" example:"300"`
	// GmtCreate is the creation time in milliseconds since the Unix epoch.
	GmtCreate int64 `json:"gmtCreate" example:"1700000000000"`
} //@name RocketMQApiDestination

// RocketMQGetAPIDestinationResponse is one API destination (RocketMQ EventBridge's GetApiDestinationResponse).
type RocketMQGetAPIDestinationResponse struct {
	RequestID string `json:"requestId"`
	RocketMQAPIDestination
} //@name RocketMQGetApiDestinationResponse

// RocketMQListAPIDestinationsRequest asks for a page of the account's API destinations, ordered by name.
type RocketMQListAPIDestinationsRequest struct {
	APIDestinationNamePrefix string `json:"apiDestinationNamePrefix" example:"create"`
	// NextToken is the decimal offset of the page's first API destination; absent for the first page.
	NextToken string `json:"nextToken" example:"50"`
	// MaxResults is the page size, 1 to 100 (0 or absent: 50).
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListApiDestinationsRequest

// RocketMQListAPIDestinationsResponse is one page of API destinations.
type RocketMQListAPIDestinationsResponse struct {
	RequestID       string                   `json:"requestId"`
	APIDestinations []RocketMQAPIDestination `json:"apiDestinations"`
	NextToken       string                   `json:"nextToken,omitempty" example:"50"`
	// Total is the number of API destinations that match the prefix.
	Total      int `json:"total" example:"1"`
	MaxResults int `json:"maxResults" example:"50"`
} //@name RocketMQListApiDestinationsResponse

func rmqAPIDestinationOf(d *apidestination.APIDestination) RocketMQAPIDestination {
	return RocketMQAPIDestination{
		APIDestinationName: d.Name(), ConnectionName: d.Connection().Name, Description: d.Description(),
		HTTPAPIParameters:            RocketMQHTTPAPIParameters{Endpoint: d.InvocationEndpoint(), Method: d.HTTPMethod()},
		InvocationRateLimitPerSecond: d.InvocationRateLimitPerSecond(), GmtCreate: d.CreatedAt().UnixMilli(),
	}
}

// rmqAPIDestinationError names the fields of an API destination as this API does.
func rmqAPIDestinationError(err error) error {
	err = renameLeading(err, "invocationEndpoint", "httpApiParameters.endpoint")
	err = renameLeading(err, "httpMethod", "httpApiParameters.method")
	err = renameLeading(err, "connection", "connectionName")
	return renameLeading(err, "name", "apiDestinationName")
}

// validate checks a createApiDestination or updateApiDestination request.
func (in *RocketMQAPIDestinationRequest) validate() error {
	if err := required("apiDestinationName", in.APIDestinationName); err != nil {
		return err
	}
	if err := domain.ValidateName("apiDestinationName", in.APIDestinationName); err != nil {
		return recode(errRMQAPIDestinationNameInvalid, err)
	}
	if p := in.HTTPAPIParameters; p != nil && len(p.APIParameters) > 0 {
		return errRMQInvalid.WithField("httpApiParameters.apiParameters").With("httpApiParameters.apiParameters is not supported: " +
			"path parameters are the endpoint's \"*\" segments, filled from the event at delivery")
	}
	if r := in.InvocationRateLimitPerSecond; r != nil && *r == 0 {
		return errRMQInvalid.WithField("invocationRateLimitPerSecond").With("invocationRateLimitPerSecond must be between 1 and %d",
			apidestination.MaxRateLimitPerSecond)
	}
	return nil
}

// rmqCreateAPIDestination creates an API destination.
//
//	@Summary		Create an API destination (RocketMQ EventBridge API)
//	@Description	httpApiParameters.endpoint is an absolute http or https URL whose "*" path segments are filled from the
//	@Description	event; apiParameters is not supported. connectionName names a connection of the account.
//	@Tags			rocketmq
//	@Accept			json
//	@Produce		json
//	@Param			resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param			body					body		RocketMQAPIDestinationRequest	true	"the API destination"
//	@Success		200						{object}	RocketMQCreateAPIDestinationResponse
//	@Failure		400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure		409						{object}	RocketMQError	"ApiDestinationAlreadyExist, ApiDestinationNameInvalid, ConnectionNotExist, ApiDestinationCountExceedLimit"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security			BearerAuth
//	@Router			/api-destination/createApiDestination [post]
func (a *api) rmqCreateAPIDestination(c *gin.Context, in *RocketMQAPIDestinationRequest) (any, error) {
	spec := apidestination.Spec{Name: in.APIDestinationName, Connection: in.ConnectionName}
	if in.Description != nil {
		spec.Description = *in.Description
	}
	if p := in.HTTPAPIParameters; p != nil {
		spec.InvocationEndpoint, spec.HTTPMethod = p.Endpoint, p.Method
	}
	if in.InvocationRateLimitPerSecond != nil {
		spec.InvocationRateLimitPerSecond = *in.InvocationRateLimitPerSecond
	}
	d, err := a.s.APIDestinations.Create(c.Request.Context(), web.AccountOf(c), spec)
	if err != nil {
		return nil, rmqAPIDestinationError(err)
	}
	return RocketMQCreateAPIDestinationResponse{RequestID: requestIDOf(c), APIDestinationName: d.Name()}, nil
}

// rmqUpdateAPIDestination changes an existing API destination; the fields it does not give are kept.
//
//	@Summary	Update an API destination (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string							false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQAPIDestinationRequest	true	"the API destination"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"ApiDestinationNotExist, ConnectionNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api-destination/updateApiDestination [post]
func (a *api) rmqUpdateAPIDestination(c *gin.Context, in *RocketMQAPIDestinationRequest) (any, error) {
	p := apidestination.Patch{Description: in.Description, InvocationRateLimitPerSecond: in.InvocationRateLimitPerSecond}
	if in.ConnectionName != "" {
		p.Connection = &in.ConnectionName
	}
	if h := in.HTTPAPIParameters; h != nil {
		if h.Endpoint != "" {
			p.InvocationEndpoint = &h.Endpoint
		}
		if h.Method != "" {
			p.HTTPMethod = &h.Method
		}
	}
	if _, err := a.s.APIDestinations.Patch(c.Request.Context(), web.AccountOf(c), in.APIDestinationName, p); err != nil {
		return nil, rmqAPIDestinationError(err)
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// validate checks what a request that names an API destination.
func (in *RocketMQAPIDestinationNameRequest) validate() error {
	return required("apiDestinationName", in.APIDestinationName)
}

// rmqGetAPIDestination answers one API destination.
//
//	@Summary	Get an API destination (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string								false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQAPIDestinationNameRequest	true	"the API destination"
//	@Success	200						{object}	RocketMQGetAPIDestinationResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"ApiDestinationNotExist"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api-destination/getApiDestination [post]
func (a *api) rmqGetAPIDestination(c *gin.Context, in *RocketMQAPIDestinationNameRequest) (any, error) {
	d, err := a.s.APIDestinations.Get(c.Request.Context(), web.AccountOf(c), in.APIDestinationName)
	if err != nil {
		return nil, err
	}
	return RocketMQGetAPIDestinationResponse{RequestID: requestIDOf(c), RocketMQAPIDestination: rmqAPIDestinationOf(d)}, nil
}

// rmqDeleteAPIDestination deletes an API destination that no target uses.
//
//	@Summary	Delete an API destination (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string								false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQAPIDestinationNameRequest	true	"the API destination"
//	@Success	200						{object}	RocketMQResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"ApiDestinationNotExist, ApiDestinationInUse (targets use it)"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api-destination/deleteApiDestination [post]
func (a *api) rmqDeleteAPIDestination(c *gin.Context, in *RocketMQAPIDestinationNameRequest) (any, error) {
	if err := a.s.APIDestinations.Delete(c.Request.Context(), web.AccountOf(c), in.APIDestinationName); err != nil {
		return nil, err
	}
	return RocketMQResponse{RequestID: requestIDOf(c)}, nil
}

// rmqListAPIDestinations answers a page of the account's API destinations whose names start with
// apiDestinationNamePrefix, ordered by name.
//
//	@Summary	List API destinations (RocketMQ EventBridge API)
//	@Tags		rocketmq
//	@Accept		json
//	@Produce	json
//	@Param		resourceOwnerAccountId	header		string								false	"account (default: the caller's own)"
//	@Param		body					body		RocketMQListAPIDestinationsRequest	true	"the page"
//	@Success	200						{object}	RocketMQListAPIDestinationsResponse
//	@Failure	400						{object}	RocketMQError	"RequestParameterInvalid"
//	@Failure	409						{object}	RocketMQError	"LimitSizeInvalid, NextTokenInvalid"
//	@Failure	401	{object}	RocketMQError	"Unauthenticated: no valid API key"
//	@Failure	403	{object}	RocketMQError	"Forbidden: the role lacks the permission"
//	@Security		BearerAuth
//	@Router		/api-destination/listApiDestinations [post]
func (a *api) rmqListAPIDestinations(c *gin.Context, in *RocketMQListAPIDestinationsRequest) (any, error) {
	offset, limit, err := rmqPage(in.NextToken, in.MaxResults)
	if err != nil {
		return nil, err
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*apidestination.APIDestination, string, error) {
		return a.s.APIDestinations.List(ctx, web.AccountOf(c), p)
	})
	if err != nil {
		return nil, err
	}
	all = withPrefix(all, in.APIDestinationNamePrefix, (*apidestination.APIDestination).Name)
	page, next := pageOfAll(all, offset, limit)
	out := RocketMQListAPIDestinationsResponse{RequestID: requestIDOf(c), APIDestinations: make([]RocketMQAPIDestination, 0, len(page)),
		NextToken: next, Total: len(all), MaxResults: limit}
	for _, d := range page {
		out.APIDestinations = append(out.APIDestinations, rmqAPIDestinationOf(d))
	}
	return out, nil
}
