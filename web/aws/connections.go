package aws

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/web"
)

// Connections are the connections of /api/v1 (domain/connection): AWS's three authorization types and their
// parameters map member for member. Secrets (a password, an API key's value, a client secret, the value of a
// parameter with IsValueSecret) are sealed when received and never answered: DescribeConnection answers the names
// (the user name, the API key's header, the client id, the parameters' keys), as AWS does.
//
// A connection is AUTHORIZED from its creation (an OAuth token is fetched when a call needs one).
// DeauthorizeConnection drops its secrets and makes it DEAUTHORIZED (connection.Service.Deauthorize): the targets
// of its API destinations then dead-letter their events; UpdateConnection with the secrets authorizes it again.

// connectionStates are AWS's connection states, which ListConnections filters by; a connection here is in one of
// the first two.
var connectionStates = []string{string(connection.Authorized), string(connection.Deauthorized), "CREATING", "UPDATING",
	"DELETING", "AUTHORIZING", "DEAUTHORIZING", "ACTIVE", "FAILED_CONNECTIVITY"}

// ConnectionParameter is a key and a value a connection adds to requests; the value of a secret one is never
// answered.
type ConnectionParameter struct {
	Key           string `json:"Key"`
	Value         string `json:"Value,omitempty"`
	IsValueSecret bool   `json:"IsValueSecret"`
}

// ConnectionHTTPParameters are AWS's ConnectionHttpParameters.
type ConnectionHTTPParameters struct {
	HeaderParameters      []ConnectionParameter `json:"HeaderParameters,omitempty"`
	QueryStringParameters []ConnectionParameter `json:"QueryStringParameters,omitempty"`
	BodyParameters        []ConnectionParameter `json:"BodyParameters,omitempty"`
}

type basicAuthIn struct {
	Username *string `json:"Username"`
	Password *string `json:"Password"`
}

type apiKeyAuthIn struct {
	APIKeyName  *string `json:"ApiKeyName"`
	APIKeyValue *string `json:"ApiKeyValue"`
}

type oauthClientIn struct {
	ClientID     *string `json:"ClientID"`
	ClientSecret *string `json:"ClientSecret"`
}

type oauthIn struct {
	AuthorizationEndpoint *string                   `json:"AuthorizationEndpoint"`
	HTTPMethod            *string                   `json:"HttpMethod"`
	ClientParameters      *oauthClientIn            `json:"ClientParameters"`
	OAuthHTTPParameters   *ConnectionHTTPParameters `json:"OAuthHttpParameters"`
}

// authParametersIn are AWS's CreateConnectionAuthRequestParameters and UpdateConnectionAuthRequestParameters.
type authParametersIn struct {
	BasicAuthParameters      *basicAuthIn              `json:"BasicAuthParameters"`
	APIKeyAuthParameters     *apiKeyAuthIn             `json:"ApiKeyAuthParameters"`
	OAuthParameters          *oauthIn                  `json:"OAuthParameters"`
	InvocationHTTPParameters *ConnectionHTTPParameters `json:"InvocationHttpParameters"`
	ConnectivityParameters   json.RawMessage           `json:"ConnectivityParameters"`
}

// ConnectionAuthParameters are a connection's parameters as DescribeConnection answers them, without secrets.
type ConnectionAuthParameters struct {
	BasicAuthParameters *struct {
		Username string `json:"Username"`
	} `json:"BasicAuthParameters,omitempty"`
	APIKeyAuthParameters *struct {
		APIKeyName string `json:"ApiKeyName"`
	} `json:"ApiKeyAuthParameters,omitempty"`
	OAuthParameters          *ConnectionOAuthParameters `json:"OAuthParameters,omitempty"`
	InvocationHTTPParameters *ConnectionHTTPParameters  `json:"InvocationHttpParameters,omitempty"`
}

// ConnectionOAuthParameters are the OAuth parameters DescribeConnection answers (the client secret is not).
type ConnectionOAuthParameters struct {
	AuthorizationEndpoint string `json:"AuthorizationEndpoint"`
	HTTPMethod            string `json:"HttpMethod"`
	ClientParameters      struct {
		ClientID string `json:"ClientID"`
	} `json:"ClientParameters"`
	OAuthHTTPParameters *ConnectionHTTPParameters `json:"OAuthHttpParameters,omitempty"`
}

// Connection is a connection as ListConnections answers it (DescribeConnection adds its description and
// parameters).
type Connection struct {
	Name              string `json:"Name"`
	ConnectionArn     string `json:"ConnectionArn"`
	ConnectionState   string `json:"ConnectionState"`
	AuthorizationType string `json:"AuthorizationType"`
	CreationTime      epoch  `json:"CreationTime"`
	LastModifiedTime  epoch  `json:"LastModifiedTime"`
	// LastAuthorizedTime is when it last became AUTHORIZED.
	LastAuthorizedTime epoch `json:"LastAuthorizedTime"`
}

func (a *api) connectionOut(c *gin.Context, conn *connection.Connection) Connection {
	return Connection{Name: conn.Name(), ConnectionArn: a.connectionARN(c, conn.Name(), conn.ID()), ConnectionState: string(conn.State()),
		AuthorizationType: string(conn.AuthorizationType()), CreationTime: epoch(conn.CreatedAt()), LastModifiedTime: epoch(conn.UpdatedAt()),
		LastAuthorizedTime: epoch(conn.AuthorizedAt())}
}

// connectionStateOut is the answer of CreateConnection, UpdateConnection, DeleteConnection and
// DeauthorizeConnection.
type connectionStateOut struct {
	ConnectionArn      string `json:"ConnectionArn"`
	ConnectionState    string `json:"ConnectionState"`
	CreationTime       epoch  `json:"CreationTime"`
	LastModifiedTime   epoch  `json:"LastModifiedTime"`
	LastAuthorizedTime epoch  `json:"LastAuthorizedTime"`
}

// connectionState answers the connection in state; "" is the state it has.
func (a *api) connectionState(c *gin.Context, conn *connection.Connection, state string) connectionStateOut {
	if state == "" {
		state = string(conn.State())
	}
	return connectionStateOut{ConnectionArn: a.connectionARN(c, conn.Name(), conn.ID()), ConnectionState: state,
		CreationTime: epoch(conn.CreatedAt()), LastModifiedTime: epoch(conn.UpdatedAt()), LastAuthorizedTime: epoch(conn.AuthorizedAt())}
}

func connectionNotFound(name string) error {
	return &Error{Type: excNotFound, Message: "Failed to describe the connection(s). Connection '" + name + "' does not exist."}
}

// lookupConnection reads the connection that member names (a name or an ARN, see resources.go), answering AWS's
// message when it does not exist: in another account, or with an id that is not the connection's (it was deleted
// and made again since the ARN was read).
func (a *api) lookupConnection(c *gin.Context, member, v string) (*connection.Connection, error) {
	r, err := a.refOf(c, member, kindConnection, v)
	if err != nil {
		return nil, err
	}
	if r.foreign {
		return nil, connectionNotFound(r.name)
	}
	conn, err := a.s.Connections.Get(c.Request.Context(), web.AccountOf(c), r.name)
	if errors.Is(err, connection.ErrNotFound) || (err == nil && r.id != "" && r.id != conn.ID()) {
		return nil, connectionNotFound(r.name)
	}
	return conn, err
}

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

func paramsOut(l []connection.Parameter) []ConnectionParameter {
	if len(l) == 0 {
		return nil
	}
	out := make([]ConnectionParameter, len(l))
	for i, p := range l {
		out[i] = ConnectionParameter{Key: p.Key, IsValueSecret: p.IsValueSecret}
		if !p.IsValueSecret {
			out[i].Value = p.Value
		}
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

// set replaces *dst with v when v is given.
func set(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// authOf is cur (a redacted spec, whose empty secrets keep the stored ones; zero on create) with the
// authorization members of in laid over it: each member given replaces what it gives, as AWS's UpdateConnection
// does. typ is the authorization type the result is for; the members of cur count only when it is cur's type.
func authOf(in *authParametersIn, cur connection.Spec, typ connection.AuthorizationType) (b *connection.BasicAuth, k *connection.APIKeyAuth,
	o *connection.OAuthParameters) {
	same := typ == cur.AuthorizationType
	if p := in.BasicAuthParameters; p != nil {
		b = &connection.BasicAuth{}
		if same && cur.Basic != nil {
			*b = *cur.Basic
		}
		set(&b.Username, p.Username)
		set(&b.Password, p.Password)
	}
	if p := in.APIKeyAuthParameters; p != nil {
		k = &connection.APIKeyAuth{}
		if same && cur.APIKey != nil {
			*k = *cur.APIKey
		}
		set(&k.APIKeyName, p.APIKeyName)
		set(&k.APIKeyValue, p.APIKeyValue)
	}
	if p := in.OAuthParameters; p != nil {
		o = &connection.OAuthParameters{}
		if same && cur.OAuth != nil {
			*o = *cur.OAuth
		}
		set(&o.AuthorizationEndpoint, p.AuthorizationEndpoint)
		set(&o.HTTPMethod, p.HTTPMethod)
		if cp := p.ClientParameters; cp != nil {
			set(&o.ClientID, cp.ClientID)
			set(&o.ClientSecret, cp.ClientSecret)
		}
		if p.OAuthHTTPParameters != nil {
			o.HTTPParameters = p.OAuthHTTPParameters.domain()
		}
	}
	return b, k, o
}

// refuseConnectivity refuses the members of private APIs (VPC Lattice resource configurations) and of customer
// keys, which have no counterpart here.
func refuseConnectivity(invocation json.RawMessage, ap *authParametersIn, kms string) error {
	switch {
	case len(invocation) > 0 && string(invocation) != "null":
		return refuseUnsupported("InvocationConnectivityParameters", "private APIs (VPC Lattice) do not exist here")
	case ap != nil && len(ap.ConnectivityParameters) > 0 && string(ap.ConnectivityParameters) != "null":
		return refuseUnsupported("AuthParameters.ConnectivityParameters", "private APIs (VPC Lattice) do not exist here")
	case kms != "":
		return refuseUnsupported("KmsKeyIdentifier", "secrets are sealed under the installation's master key")
	}
	return nil
}

type createConnectionIn struct {
	Name                             string
	Description                      string
	AuthorizationType                string
	AuthParameters                   *authParametersIn
	InvocationConnectivityParameters json.RawMessage
	KmsKeyIdentifier                 string
}

// createConnection creates a connection; its secrets are sealed at once.
func (a *api) createConnection(c *gin.Context, in *createConnectionIn) (any, error) {
	if err := checkName("Name", in.Name); err != nil {
		return nil, err
	}
	if err := refuseConnectivity(in.InvocationConnectivityParameters, in.AuthParameters, in.KmsKeyIdentifier); err != nil {
		return nil, err
	}
	if in.AuthParameters == nil {
		return nil, validation("Parameter AuthParameters is required.")
	}
	typ := connection.AuthorizationType(in.AuthorizationType)
	spec := connection.Spec{Name: in.Name, Description: in.Description, AuthorizationType: typ,
		InvocationHTTPParameters: in.AuthParameters.InvocationHTTPParameters.domain()}
	spec.Basic, spec.APIKey, spec.OAuth = authOf(in.AuthParameters, connection.Spec{}, typ)
	conn, err := a.s.Connections.Create(c.Request.Context(), web.AccountOf(c), spec)
	if errors.Is(err, connection.ErrAlreadyExists) {
		return nil, &Error{Type: excAlreadyExists, Message: "Connection " + in.Name + " already exists."}
	}
	if err != nil {
		return nil, err
	}
	return a.connectionState(c, conn, ""), nil
}

type connectionNameIn struct{ Name string }

// lookupConnectionByName reads the connection named by the member Name, which takes a name only, as in AWS.
func (a *api) lookupConnectionByName(c *gin.Context, name string) (*connection.Connection, error) {
	if err := checkName("Name", name); err != nil {
		return nil, err
	}
	conn, err := a.s.Connections.Get(c.Request.Context(), web.AccountOf(c), name)
	if errors.Is(err, connection.ErrNotFound) {
		return nil, connectionNotFound(name)
	}
	return conn, err
}

// deleteConnection deletes a connection that no API destination uses (AWS deletes one in use; here delete or move
// its API destinations first). It answers DELETING, as AWS does; here the connection is gone when the call answers.
func (a *api) deleteConnection(c *gin.Context, in *connectionNameIn) (any, error) {
	conn, err := a.lookupConnectionByName(c, in.Name)
	if err != nil {
		return nil, err
	}
	err = a.s.Connections.Delete(c.Request.Context(), web.AccountOf(c), in.Name)
	if errors.Is(err, connection.ErrNotFound) {
		return nil, connectionNotFound(in.Name)
	}
	if err != nil {
		return nil, err
	}
	return a.connectionState(c, conn, "DELETING"), nil
}

// deauthorizeConnection drops the connection's secrets and makes it DEAUTHORIZED, which it answers (AWS answers
// DEAUTHORIZING, then DEAUTHORIZED; here the connection is DEAUTHORIZED when the call answers, and its targets'
// connectors refuse their events from the next reconciliation on, within --reconcile-interval).
func (a *api) deauthorizeConnection(c *gin.Context, in *connectionNameIn) (any, error) {
	if _, err := a.lookupConnectionByName(c, in.Name); err != nil {
		return nil, err
	}
	conn, err := a.s.Connections.Deauthorize(c.Request.Context(), web.AccountOf(c), in.Name)
	if errors.Is(err, connection.ErrNotFound) {
		return nil, connectionNotFound(in.Name)
	}
	if err != nil {
		return nil, err
	}
	return a.connectionState(c, conn, ""), nil
}

// ConnectionDescription is what DescribeConnection answers.
type ConnectionDescription struct {
	Connection
	Description    string                   `json:"Description,omitempty"`
	AuthParameters ConnectionAuthParameters `json:"AuthParameters"`
}

func (a *api) describeConnection(c *gin.Context, in *connectionNameIn) (any, error) {
	conn, err := a.lookupConnectionByName(c, in.Name)
	if err != nil {
		return nil, err
	}
	s := conn.Redacted()
	out := ConnectionDescription{Connection: a.connectionOut(c, conn), Description: conn.Description()}
	ap := &out.AuthParameters
	if s.Basic != nil {
		ap.BasicAuthParameters = &struct {
			Username string `json:"Username"`
		}{Username: s.Basic.Username}
	}
	if s.APIKey != nil {
		ap.APIKeyAuthParameters = &struct {
			APIKeyName string `json:"ApiKeyName"`
		}{APIKeyName: s.APIKey.APIKeyName}
	}
	if o := s.OAuth; o != nil {
		ap.OAuthParameters = &ConnectionOAuthParameters{AuthorizationEndpoint: o.AuthorizationEndpoint, HTTPMethod: o.HTTPMethod,
			OAuthHTTPParameters: httpParamsOut(o.HTTPParameters)}
		ap.OAuthParameters.ClientParameters.ClientID = o.ClientID
	}
	ap.InvocationHTTPParameters = httpParamsOut(s.InvocationHTTPParameters)
	return out, nil
}

type listConnectionsIn struct {
	NamePrefix      string
	ConnectionState string
	NextToken       string
	Limit           *int
}

func (a *api) listConnections(c *gin.Context, in *listConnectionsIn) (any, error) {
	if in.ConnectionState != "" && !slices.Contains(connectionStates, in.ConnectionState) {
		return nil, validation("Parameter ConnectionState is not valid: %q is not one of %v.", in.ConnectionState, connectionStates)
	}
	all, err := domain.AllPages(c.Request.Context(), func(ctx context.Context, p domain.Page) ([]*connection.Connection, string, error) {
		return a.s.Connections.List(ctx, web.AccountOf(c), p)
	})
	if err != nil {
		return nil, err
	}
	if in.ConnectionState != "" {
		all = slices.DeleteFunc(all, func(conn *connection.Connection) bool { return string(conn.State()) != in.ConnectionState })
	}
	page, next, err := pageOf(prefixed(all, in.NamePrefix, (*connection.Connection).Name), in.NextToken, in.Limit)
	if err != nil {
		return nil, err
	}
	out := struct {
		Connections []Connection `json:"Connections"`
		NextToken   string       `json:"NextToken,omitempty"`
	}{Connections: make([]Connection, 0, len(page)), NextToken: next}
	for _, conn := range page {
		out.Connections = append(out.Connections, a.connectionOut(c, conn))
	}
	return out, nil
}

type updateConnectionIn struct {
	Name                             string
	Description                      *string
	AuthorizationType                string
	AuthParameters                   *authParametersIn
	InvocationConnectivityParameters json.RawMessage
	KmsKeyIdentifier                 string
}

// updateConnection changes what the request gives and keeps the rest: a member of AuthParameters changes the
// parameters it gives (a secret not given is kept), a new AuthorizationType drops the parameters of the former one
// and needs those of the new one, InvocationHttpParameters replaces the three lists (a secret parameter given
// without its value keeps the stored one).
func (a *api) updateConnection(c *gin.Context, in *updateConnectionIn) (any, error) {
	cur, err := a.lookupConnectionByName(c, in.Name)
	if err != nil {
		return nil, err
	}
	if err := refuseConnectivity(in.InvocationConnectivityParameters, in.AuthParameters, in.KmsKeyIdentifier); err != nil {
		return nil, err
	}
	p := connection.Patch{Description: in.Description}
	typ := cur.AuthorizationType()
	if in.AuthorizationType != "" {
		typ = connection.AuthorizationType(in.AuthorizationType)
		p.AuthorizationType = &typ
	}
	if ap := in.AuthParameters; ap != nil {
		p.Basic, p.APIKey, p.OAuth = authOf(ap, cur.Redacted(), typ)
		if ap.InvocationHTTPParameters != nil {
			inv := ap.InvocationHTTPParameters.domain()
			p.InvocationHTTPParameters = &inv
		}
	}
	conn, err := a.s.Connections.Patch(c.Request.Context(), web.AccountOf(c), in.Name, p)
	if errors.Is(err, connection.ErrNotFound) {
		return nil, connectionNotFound(in.Name)
	}
	if err != nil {
		return nil, err
	}
	return a.connectionState(c, conn, ""), nil
}
