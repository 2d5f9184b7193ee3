package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	awssdk "github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/domain/account"
)

// headerReceiver records what an API destination delivers: the path, the headers and the body of every call.
type headerReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []receivedCall
}

type receivedCall struct {
	path   string
	header http.Header
	body   string
}

func newHeaderReceiver(t *testing.T) *headerReceiver {
	r := &headerReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.calls = append(r.calls, receivedCall{path: req.URL.Path, header: req.Header.Clone(), body: string(b)})
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// at returns the calls to path.
func (r *headerReceiver) at(path string) []receivedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedCall
	for _, c := range r.calls {
		if c.path == path {
			out = append(out, c)
		}
	}
	return out
}

// awsRaw sends a request of the operation signed with the key, as the SDKs do, and answers the status and the
// body as they are (what the SDK's types would not show: members they do not have).
func awsRaw(t *testing.T, m *Main, k awsKey, operation, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+m.HTTPAddr()+"/", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AWSEvents."+operation)
	sum := sha256.Sum256([]byte(body))
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), awssdk.Credentials{AccessKeyID: k.ID, SecretAccessKey: k.Secret},
		req, hex.EncodeToString(sum[:]), "events", "us-east-1", time.Now()))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(out)
}

// TestAWSAPIPart2 drives the operations of part 2 of the Amazon EventBridge API (connections, API destinations,
// archives, replays) with AWS's own Go SDK against the real control plane: each with its success and main errors,
// then an event delivered through an API destination with its connection's key, and an archive replayed.
func TestAWSAPIPart2(t *testing.T) {
	// Changes of connections reach targets' connectors through the reconciler's periodic pass.
	m := startMain(t, t.TempDir(), "--reconcile-interval", "1s")
	defer func() { require.NoError(t, m.Close()) }()
	admin := apiOf(t, m)
	a := admin.newAccount("awsp2")
	key := a.newAWSKey("sdk", "admin")
	eb := awsClient(m, key, "us-east-1")
	ctx := context.Background()
	number := account.AWSAccountID("awsp2")
	arnPrefix := "arn:aws:events:us-east-1:" + number + ":"
	rcv := newHeaderReceiver(t)
	var (
		nf     *types.ResourceNotFoundException
		exists *types.ResourceAlreadyExistsException
	)

	var connARN string
	t.Run("connections", func(t *testing.T) {
		out, err := eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String("rcv-key"),
			Description: awssdk.String("the receiver"), AuthorizationType: types.ConnectionAuthorizationTypeApiKey,
			AuthParameters: &types.CreateConnectionAuthRequestParameters{
				ApiKeyAuthParameters: &types.CreateConnectionApiKeyAuthRequestParameters{ApiKeyName: awssdk.String("X-Api-Key"),
					ApiKeyValue: awssdk.String("k-secret-1")},
				InvocationHttpParameters: &types.ConnectionHttpParameters{HeaderParameters: []types.ConnectionHeaderParameter{
					{Key: awssdk.String("X-Team"), Value: awssdk.String("shop")},
					{Key: awssdk.String("X-Token"), Value: awssdk.String("t-secret-2"), IsValueSecret: true},
				}},
			}})
		require.NoError(t, err)
		connARN = awssdk.ToString(out.ConnectionArn)
		assert.Regexp(t, `^`+arnPrefix+`connection/rcv-key/[a-z2-7]{16}$`, connARN)
		assert.Equal(t, types.ConnectionStateAuthorized, out.ConnectionState)
		assert.WithinDuration(t, time.Now(), awssdk.ToTime(out.CreationTime), time.Minute)

		_, err = eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String("rcv-key"),
			AuthorizationType: types.ConnectionAuthorizationTypeBasic, AuthParameters: &types.CreateConnectionAuthRequestParameters{
				BasicAuthParameters: &types.CreateConnectionBasicAuthRequestParameters{Username: awssdk.String("u"), Password: awssdk.String("p")}}})
		require.ErrorAs(t, err, &exists)
		assert.Equal(t, "Connection rcv-key already exists.", exists.ErrorMessage())

		_, err = eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String("basic"),
			AuthorizationType: types.ConnectionAuthorizationTypeBasic, AuthParameters: &types.CreateConnectionAuthRequestParameters{
				BasicAuthParameters: &types.CreateConnectionBasicAuthRequestParameters{Username: awssdk.String("shop"),
					Password: awssdk.String("basic-pass-3")}}})
		require.NoError(t, err)
		_, err = eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String("oauth"),
			AuthorizationType: types.ConnectionAuthorizationTypeOauthClientCredentials, AuthParameters: &types.CreateConnectionAuthRequestParameters{
				OAuthParameters: &types.CreateConnectionOAuthRequestParameters{AuthorizationEndpoint: awssdk.String(rcv.srv.URL + "/token"),
					HttpMethod: types.ConnectionOAuthHttpMethodPost, ClientParameters: &types.CreateConnectionOAuthClientRequestParameters{
						ClientID: awssdk.String("client-1"), ClientSecret: awssdk.String("client-secret-4")}}}})
		require.NoError(t, err)

		for name, in := range map[string]*eventbridge.CreateConnectionInput{
			"a name with a dot": {Name: awssdk.String("bad.name"), AuthorizationType: types.ConnectionAuthorizationTypeBasic,
				AuthParameters: &types.CreateConnectionAuthRequestParameters{BasicAuthParameters: &types.CreateConnectionBasicAuthRequestParameters{
					Username: awssdk.String("u"), Password: awssdk.String("p")}}},
			"the parameters of another type": {Name: awssdk.String("mixed"), AuthorizationType: types.ConnectionAuthorizationTypeBasic,
				AuthParameters: &types.CreateConnectionAuthRequestParameters{ApiKeyAuthParameters: &types.CreateConnectionApiKeyAuthRequestParameters{
					ApiKeyName: awssdk.String("X-Key"), ApiKeyValue: awssdk.String("v")}}},
			"a customer key": {Name: awssdk.String("kms"), AuthorizationType: types.ConnectionAuthorizationTypeBasic, KmsKeyIdentifier: awssdk.String("k"),
				AuthParameters: &types.CreateConnectionAuthRequestParameters{BasicAuthParameters: &types.CreateConnectionBasicAuthRequestParameters{
					Username: awssdk.String("u"), Password: awssdk.String("p")}}},
		} {
			_, err := eb.CreateConnection(ctx, in)
			assert.Equal(t, "ValidationException", apiErrorCode(err), "%s: %v", name, err)
		}
		_, err = eb.CreateConnection(ctx, &eventbridge.CreateConnectionInput{Name: awssdk.String("bad.name"),
			AuthorizationType: types.ConnectionAuthorizationTypeBasic, AuthParameters: &types.CreateConnectionAuthRequestParameters{}})
		assert.ErrorContains(t, err, "no '.'", "the answer names the rule of names")

		d, err := eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("rcv-key")})
		require.NoError(t, err)
		assert.Equal(t, connARN, awssdk.ToString(d.ConnectionArn))
		assert.Equal(t, "the receiver", awssdk.ToString(d.Description))
		assert.Equal(t, types.ConnectionAuthorizationTypeApiKey, d.AuthorizationType)
		assert.Equal(t, types.ConnectionStateAuthorized, d.ConnectionState)
		assert.Equal(t, "X-Api-Key", awssdk.ToString(d.AuthParameters.ApiKeyAuthParameters.ApiKeyName))
		headers := d.AuthParameters.InvocationHttpParameters.HeaderParameters
		require.Len(t, headers, 2)
		assert.Equal(t, "shop", awssdk.ToString(headers[0].Value))
		assert.True(t, headers[1].IsValueSecret)
		assert.Nil(t, headers[1].Value, "a secret parameter's value is not answered")
		o, err := eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("oauth")})
		require.NoError(t, err)
		assert.Equal(t, "client-1", awssdk.ToString(o.AuthParameters.OAuthParameters.ClientParameters.ClientID))
		assert.Equal(t, types.ConnectionOAuthHttpMethodPost, o.AuthParameters.OAuthParameters.HttpMethod)
		for _, name := range []string{"rcv-key", "basic", "oauth"} {
			status, body := awsRaw(t, m, key, "DescribeConnection", `{"Name": "`+name+`"}`)
			require.Equal(t, http.StatusOK, status, body)
			for _, secret := range []string{"k-secret-1", "t-secret-2", "basic-pass-3", "client-secret-4", "enc:"} {
				assert.NotContains(t, body, secret, "secrets are never answered")
			}
		}
		_, err = eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("nope")})
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Failed to describe the connection(s). Connection 'nope' does not exist.", nf.ErrorMessage())

		var names []string
		in := &eventbridge.ListConnectionsInput{Limit: awssdk.Int32(2)}
		for pages := 0; ; pages++ {
			require.Less(t, pages, 3)
			l, err := eb.ListConnections(ctx, in)
			require.NoError(t, err)
			for _, c := range l.Connections {
				names = append(names, awssdk.ToString(c.Name))
				assert.Equal(t, types.ConnectionStateAuthorized, c.ConnectionState)
			}
			if l.NextToken == nil {
				break
			}
			in.NextToken = l.NextToken
		}
		assert.Equal(t, []string{"basic", "oauth", "rcv-key"}, names)
		l, err := eb.ListConnections(ctx, &eventbridge.ListConnectionsInput{NamePrefix: awssdk.String("rc")})
		require.NoError(t, err)
		require.Len(t, l.Connections, 1)
		assert.Equal(t, connARN, awssdk.ToString(l.Connections[0].ConnectionArn))
		l, err = eb.ListConnections(ctx, &eventbridge.ListConnectionsInput{ConnectionState: types.ConnectionStateDeauthorized})
		require.NoError(t, err)
		assert.Empty(t, l.Connections, "no connection here is deauthorized")
		_, err = eb.ListConnections(ctx, &eventbridge.ListConnectionsInput{ConnectionState: "SLEEPY"})
		assert.Equal(t, "ValidationException", apiErrorCode(err))

		// Update changes what it gives: the password alone keeps the user name.
		u, err := eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String("basic"), Description: awssdk.String("changed"),
			AuthParameters: &types.UpdateConnectionAuthRequestParameters{BasicAuthParameters: &types.UpdateConnectionBasicAuthRequestParameters{
				Password: awssdk.String("basic-pass-5")}}})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateAuthorized, u.ConnectionState)
		d, err = eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("basic")})
		require.NoError(t, err)
		assert.Equal(t, "changed", awssdk.ToString(d.Description))
		assert.Equal(t, "shop", awssdk.ToString(d.AuthParameters.BasicAuthParameters.Username))
		_, err = eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String("basic"),
			AuthorizationType: types.ConnectionAuthorizationTypeApiKey})
		assert.Equal(t, "ValidationException", apiErrorCode(err), "a new type needs its parameters")
		_, err = eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String("nope"), Description: awssdk.String("x")})
		require.ErrorAs(t, err, &nf)

		// DeauthorizeConnection drops the secrets; an update that gives none keeps the connection DEAUTHORIZED, one
		// that gives the password authorizes it again.
		before, err := eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("basic")})
		require.NoError(t, err)
		da, err := eb.DeauthorizeConnection(ctx, &eventbridge.DeauthorizeConnectionInput{Name: awssdk.String("basic")})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateDeauthorized, da.ConnectionState)
		assert.Equal(t, awssdk.ToString(before.ConnectionArn), awssdk.ToString(da.ConnectionArn))
		assert.Equal(t, awssdk.ToTime(before.LastAuthorizedTime), awssdk.ToTime(da.LastAuthorizedTime))
		d, err = eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("basic")})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateDeauthorized, d.ConnectionState)
		assert.Equal(t, "shop", awssdk.ToString(d.AuthParameters.BasicAuthParameters.Username), "what is not secret stays")
		l, err = eb.ListConnections(ctx, &eventbridge.ListConnectionsInput{ConnectionState: types.ConnectionStateDeauthorized})
		require.NoError(t, err)
		require.Len(t, l.Connections, 1)
		assert.Equal(t, "basic", awssdk.ToString(l.Connections[0].Name))
		l, err = eb.ListConnections(ctx, &eventbridge.ListConnectionsInput{ConnectionState: types.ConnectionStateAuthorized})
		require.NoError(t, err)
		assert.Len(t, l.Connections, 2)
		u, err = eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String("basic"), Description: awssdk.String("parked")})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateDeauthorized, u.ConnectionState, "no secret given: still deauthorized")
		u, err = eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String("basic"),
			AuthParameters: &types.UpdateConnectionAuthRequestParameters{BasicAuthParameters: &types.UpdateConnectionBasicAuthRequestParameters{
				Password: awssdk.String("basic-pass-6")}}})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateAuthorized, u.ConnectionState)
		assert.True(t, awssdk.ToTime(u.LastAuthorizedTime).After(awssdk.ToTime(before.LastAuthorizedTime)), "authorized again, now")
		_, err = eb.DeauthorizeConnection(ctx, &eventbridge.DeauthorizeConnectionInput{Name: awssdk.String("nope")})
		require.ErrorAs(t, err, &nf)

		del, err := eb.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String("oauth")})
		require.NoError(t, err)
		assert.Equal(t, types.ConnectionStateDeleting, del.ConnectionState)
		_, err = eb.DescribeConnection(ctx, &eventbridge.DescribeConnectionInput{Name: awssdk.String("oauth")})
		require.ErrorAs(t, err, &nf)
		_, err = eb.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String("oauth")})
		require.ErrorAs(t, err, &nf)
		a.must("GET", "/api/v1/connections/basic", nil, 200) // one resource, whichever API made it
	})

	var destARN string
	t.Run("API destinations", func(t *testing.T) {
		require.NotEmpty(t, connARN)
		out, err := eb.CreateApiDestination(ctx, &eventbridge.CreateApiDestinationInput{Name: awssdk.String("orders-api"),
			ConnectionArn: awssdk.String(connARN), InvocationEndpoint: awssdk.String(rcv.srv.URL + "/orders/*"),
			HttpMethod: types.ApiDestinationHttpMethodPost, InvocationRateLimitPerSecond: awssdk.Int32(10),
			Description: awssdk.String("orders")})
		require.NoError(t, err)
		destARN = awssdk.ToString(out.ApiDestinationArn)
		assert.Regexp(t, `^`+arnPrefix+`api-destination/orders-api/[a-z2-7]{16}$`, destARN)
		assert.Equal(t, types.ApiDestinationStateActive, out.ApiDestinationState)

		_, err = eb.CreateApiDestination(ctx, &eventbridge.CreateApiDestinationInput{Name: awssdk.String("orders-api"),
			ConnectionArn: awssdk.String(connARN), InvocationEndpoint: awssdk.String(rcv.srv.URL), HttpMethod: types.ApiDestinationHttpMethodPost})
		require.ErrorAs(t, err, &exists)
		assert.Equal(t, "An api-destination 'orders-api' already exists.", exists.ErrorMessage())

		// A connection's ARN is taken without its id too; with another id or of another account, it is not found.
		withoutID := arnPrefix + "connection/rcv-key"
		_, err = eb.CreateApiDestination(ctx, &eventbridge.CreateApiDestinationInput{Name: awssdk.String("spare"),
			ConnectionArn: awssdk.String(withoutID), InvocationEndpoint: awssdk.String(rcv.srv.URL + "/spare"), HttpMethod: types.ApiDestinationHttpMethodGet})
		require.NoError(t, err)
		for _, arn := range []string{withoutID + "/aaaaaaaaaaaaaaaa", "arn:aws:events:us-east-1:111111111111:connection/rcv-key", arnPrefix + "connection/nope"} {
			_, err = eb.CreateApiDestination(ctx, &eventbridge.CreateApiDestinationInput{Name: awssdk.String("other"),
				ConnectionArn: awssdk.String(arn), InvocationEndpoint: awssdk.String(rcv.srv.URL), HttpMethod: types.ApiDestinationHttpMethodGet})
			require.ErrorAs(t, err, &nf, arn)
		}
		for name, in := range map[string]*eventbridge.CreateApiDestinationInput{
			"an endpoint that is no URL": {Name: awssdk.String("bad"), ConnectionArn: awssdk.String(connARN),
				InvocationEndpoint: awssdk.String("not a url"), HttpMethod: types.ApiDestinationHttpMethodPost},
			"a method that is none": {Name: awssdk.String("bad"), ConnectionArn: awssdk.String(connARN),
				InvocationEndpoint: awssdk.String(rcv.srv.URL), HttpMethod: "BREW"},
			"a name with a dot": {Name: awssdk.String("bad.name"), ConnectionArn: awssdk.String(connARN),
				InvocationEndpoint: awssdk.String(rcv.srv.URL), HttpMethod: types.ApiDestinationHttpMethodPost},
			"a connection ARN of something else": {Name: awssdk.String("bad"), ConnectionArn: awssdk.String(arnPrefix + "event-bus/default"),
				InvocationEndpoint: awssdk.String(rcv.srv.URL), HttpMethod: types.ApiDestinationHttpMethodPost},
		} {
			_, err := eb.CreateApiDestination(ctx, in)
			assert.Equal(t, "ValidationException", apiErrorCode(err), "%s: %v", name, err)
		}

		d, err := eb.DescribeApiDestination(ctx, &eventbridge.DescribeApiDestinationInput{Name: awssdk.String("orders-api")})
		require.NoError(t, err)
		assert.Equal(t, destARN, awssdk.ToString(d.ApiDestinationArn))
		assert.Equal(t, connARN, awssdk.ToString(d.ConnectionArn))
		assert.Equal(t, rcv.srv.URL+"/orders/*", awssdk.ToString(d.InvocationEndpoint))
		assert.Equal(t, types.ApiDestinationHttpMethodPost, d.HttpMethod)
		assert.Equal(t, int32(10), awssdk.ToInt32(d.InvocationRateLimitPerSecond))
		assert.Equal(t, "orders", awssdk.ToString(d.Description))
		assert.Equal(t, types.ApiDestinationStateActive, d.ApiDestinationState)
		_, err = eb.DescribeApiDestination(ctx, &eventbridge.DescribeApiDestinationInput{Name: awssdk.String("nope")})
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Failed to describe the api-destination(s). An api-destination 'nope' does not exist.", nf.ErrorMessage())

		l, err := eb.ListApiDestinations(ctx, &eventbridge.ListApiDestinationsInput{ConnectionArn: awssdk.String(connARN)})
		require.NoError(t, err)
		require.Len(t, l.ApiDestinations, 2)
		assert.Equal(t, "orders-api", awssdk.ToString(l.ApiDestinations[0].Name))
		assert.Equal(t, destARN, awssdk.ToString(l.ApiDestinations[0].ApiDestinationArn))
		l, err = eb.ListApiDestinations(ctx, &eventbridge.ListApiDestinationsInput{NamePrefix: awssdk.String("sp"), Limit: awssdk.Int32(1)})
		require.NoError(t, err)
		require.Len(t, l.ApiDestinations, 1)
		assert.Equal(t, "spare", awssdk.ToString(l.ApiDestinations[0].Name))
		assert.Nil(t, l.NextToken)

		u, err := eb.UpdateApiDestination(ctx, &eventbridge.UpdateApiDestinationInput{Name: awssdk.String("spare"),
			InvocationRateLimitPerSecond: awssdk.Int32(5), HttpMethod: types.ApiDestinationHttpMethodPut})
		require.NoError(t, err)
		assert.Equal(t, types.ApiDestinationStateActive, u.ApiDestinationState)
		d, err = eb.DescribeApiDestination(ctx, &eventbridge.DescribeApiDestinationInput{Name: awssdk.String("spare")})
		require.NoError(t, err)
		assert.Equal(t, int32(5), awssdk.ToInt32(d.InvocationRateLimitPerSecond))
		assert.Equal(t, types.ApiDestinationHttpMethodPut, d.HttpMethod)
		assert.Equal(t, rcv.srv.URL+"/spare", awssdk.ToString(d.InvocationEndpoint), "what is not given is kept")
		_, err = eb.UpdateApiDestination(ctx, &eventbridge.UpdateApiDestinationInput{Name: awssdk.String("nope"), Description: awssdk.String("x")})
		require.ErrorAs(t, err, &nf)
		_, err = eb.UpdateApiDestination(ctx, &eventbridge.UpdateApiDestinationInput{Name: awssdk.String("spare"),
			InvocationEndpoint: awssdk.String("ftp://x")})
		assert.Equal(t, "ValidationException", apiErrorCode(err))

		_, err = eb.DeleteApiDestination(ctx, &eventbridge.DeleteApiDestinationInput{Name: awssdk.String("spare")})
		require.NoError(t, err)
		_, err = eb.DeleteApiDestination(ctx, &eventbridge.DeleteApiDestinationInput{Name: awssdk.String("spare")})
		require.ErrorAs(t, err, &nf)
		_, err = eb.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String("rcv-key")})
		assert.Equal(t, "ValidationException", apiErrorCode(err), "a connection that an API destination uses is not deleted")
		assert.ErrorContains(t, err, "orders-api")
	})

	busARN, ruleARN := arnPrefix+"event-bus/p2", arnPrefix+"rule/p2/to-api"
	put := func(t *testing.T, ids ...string) {
		t.Helper()
		var entries []types.PutEventsRequestEntry
		for _, id := range ids {
			entries = append(entries, types.PutEventsRequestEntry{EventBusName: awssdk.String("p2"), Source: awssdk.String("shop"),
				DetailType: awssdk.String("OrderPlaced"), Detail: awssdk.String(`{"id": "` + id + `"}`)})
		}
		pe, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		require.NoError(t, err)
		require.Zero(t, pe.FailedEntryCount, "%v", awsEntries(pe.Entries))
	}
	t.Run("delivery through the API destination", func(t *testing.T) {
		require.NotEmpty(t, destARN)
		_, err := eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: awssdk.String("p2")})
		require.NoError(t, err)
		r, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: awssdk.String("to-api"), EventBusName: awssdk.String("p2"),
			EventPattern: awssdk.String(`{"source": ["shop"]}`)})
		require.NoError(t, err)
		require.Equal(t, ruleARN, awssdk.ToString(r.RuleArn))
		pt, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: awssdk.String("to-api"), EventBusName: awssdk.String("p2"),
			Targets: []types.Target{{Id: awssdk.String("api"), Arn: awssdk.String(destARN),
				HttpParameters: &types.HttpParameters{PathParameterValues: []string{"$.detail.id"}}}}})
		require.NoError(t, err)
		require.Zero(t, pt.FailedEntryCount, "%+v", pt.FailedEntries)

		put(t, "o-1")
		require.Eventually(t, func() bool { return len(rcv.at("/orders/o-1")) == 1 }, 30*time.Second, 50*time.Millisecond,
			"delivered by the API destination, the path parameter filled")
		got := rcv.at("/orders/o-1")[0]
		assert.Equal(t, "k-secret-1", got.header.Get("X-Api-Key"), "with the connection's API key")
		assert.Equal(t, "shop", got.header.Get("X-Team"), "and its invocation headers")
		assert.Equal(t, "t-secret-2", got.header.Get("X-Token"), "secret ones too")
		var env map[string]any
		require.NoError(t, json.Unmarshal([]byte(got.body), &env), got.body)
		assert.Equal(t, map[string]any{"id": "o-1"}, env["detail"], "in AWS's envelope")
	})

	t.Run("targets answer the API destination's ARN", func(t *testing.T) {
		lt, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: awssdk.String("to-api"), EventBusName: awssdk.String("p2")})
		require.NoError(t, err)
		require.Len(t, lt.Targets, 1)
		assert.Equal(t, destARN, awssdk.ToString(lt.Targets[0].Arn), "the ARN DescribeApiDestination answers, which the target was put with")
	})

	archiveARN := arnPrefix + "archive/p2-arch"
	t.Run("archives", func(t *testing.T) {
		out, err := eb.CreateArchive(ctx, &eventbridge.CreateArchiveInput{ArchiveName: awssdk.String("p2-arch"), EventSourceArn: awssdk.String(busARN),
			EventPattern: awssdk.String(`{"source": ["shop"], "detail-type": ["OrderPlaced"]}`), RetentionDays: awssdk.Int32(7),
			Description: awssdk.String("orders")})
		require.NoError(t, err)
		assert.Equal(t, archiveARN, awssdk.ToString(out.ArchiveArn))
		assert.Equal(t, types.ArchiveStateEnabled, out.State)

		_, err = eb.CreateArchive(ctx, &eventbridge.CreateArchiveInput{ArchiveName: awssdk.String("p2-arch"), EventSourceArn: awssdk.String(busARN)})
		require.ErrorAs(t, err, &exists)
		assert.Equal(t, "Archive p2-arch already exists.", exists.ErrorMessage())
		_, err = eb.CreateArchive(ctx, &eventbridge.CreateArchiveInput{ArchiveName: awssdk.String("x"), EventSourceArn: awssdk.String(arnPrefix + "event-bus/nope")})
		require.ErrorAs(t, err, &nf)
		var ip *types.InvalidEventPatternException
		_, err = eb.CreateArchive(ctx, &eventbridge.CreateArchiveInput{ArchiveName: awssdk.String("x"), EventSourceArn: awssdk.String(busARN),
			EventPattern: awssdk.String(`{"source": "shop"}`)})
		require.ErrorAs(t, err, &ip)
		_, err = eb.CreateArchive(ctx, &eventbridge.CreateArchiveInput{ArchiveName: awssdk.String("x.y"), EventSourceArn: awssdk.String(busARN)})
		assert.Equal(t, "ValidationException", apiErrorCode(err))

		d, err := eb.DescribeArchive(ctx, &eventbridge.DescribeArchiveInput{ArchiveName: awssdk.String("p2-arch")})
		require.NoError(t, err)
		assert.Equal(t, archiveARN, awssdk.ToString(d.ArchiveArn))
		assert.Equal(t, busARN, awssdk.ToString(d.EventSourceArn))
		assert.Equal(t, `{"source":["shop"],"detail-type":["OrderPlaced"]}`, awssdk.ToString(d.EventPattern),
			"the pattern in AWS's names, compact")
		assert.Equal(t, int32(7), awssdk.ToInt32(d.RetentionDays))
		assert.Equal(t, "orders", awssdk.ToString(d.Description))
		assert.Equal(t, types.ArchiveStateEnabled, d.State)
		_, err = eb.DescribeArchive(ctx, &eventbridge.DescribeArchiveInput{ArchiveName: awssdk.String("nope")})
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Archive nope does not exist.", nf.ErrorMessage())

		_, err = eb.UpdateArchive(ctx, &eventbridge.UpdateArchiveInput{ArchiveName: awssdk.String("p2-arch"), RetentionDays: awssdk.Int32(14)})
		require.NoError(t, err)
		d, err = eb.DescribeArchive(ctx, &eventbridge.DescribeArchiveInput{ArchiveName: awssdk.String("p2-arch")})
		require.NoError(t, err)
		assert.Equal(t, int32(14), awssdk.ToInt32(d.RetentionDays))
		assert.Equal(t, "orders", awssdk.ToString(d.Description), "what is not given is kept")
		assert.NotEmpty(t, awssdk.ToString(d.EventPattern), "what is not given is kept")
		_, err = eb.UpdateArchive(ctx, &eventbridge.UpdateArchiveInput{ArchiveName: awssdk.String("nope"), RetentionDays: awssdk.Int32(1)})
		require.ErrorAs(t, err, &nf)
		_, err = eb.UpdateArchive(ctx, &eventbridge.UpdateArchiveInput{ArchiveName: awssdk.String("p2-arch"), EventPattern: awssdk.String(`[]`)})
		require.ErrorAs(t, err, &ip)

		l, err := eb.ListArchives(ctx, &eventbridge.ListArchivesInput{EventSourceArn: awssdk.String(busARN)})
		require.NoError(t, err)
		require.Len(t, l.Archives, 1)
		assert.Equal(t, "p2-arch", awssdk.ToString(l.Archives[0].ArchiveName))
		assert.Equal(t, busARN, awssdk.ToString(l.Archives[0].EventSourceArn))
		l, err = eb.ListArchives(ctx, &eventbridge.ListArchivesInput{State: types.ArchiveStateDisabled})
		require.NoError(t, err)
		assert.Empty(t, l.Archives)
		_, err = eb.ListArchives(ctx, &eventbridge.ListArchivesInput{EventSourceArn: awssdk.String(arnPrefix + "event-bus/nope")})
		require.ErrorAs(t, err, &nf)
	})

	t.Run("replays", func(t *testing.T) {
		start := time.Now().Add(-time.Second)
		put(t, "r-1", "r-2", "r-3")
		require.Eventually(t, func() bool {
			d, err := eb.DescribeArchive(ctx, &eventbridge.DescribeArchiveInput{ArchiveName: awssdk.String("p2-arch")})
			require.NoError(t, err)
			return d.EventCount == 3 && d.SizeBytes > 0
		}, 30*time.Second, 50*time.Millisecond, "archived")
		require.Eventually(t, func() bool {
			return len(rcv.at("/orders/r-1"))+len(rcv.at("/orders/r-2"))+len(rcv.at("/orders/r-3")) == 3
		}, 30*time.Second, 50*time.Millisecond, "delivered live")
		time.Sleep(20 * time.Millisecond)
		end := time.Now()
		window := func(name string) *eventbridge.StartReplayInput {
			return &eventbridge.StartReplayInput{ReplayName: awssdk.String(name), EventSourceArn: awssdk.String(archiveARN),
				EventStartTime: awssdk.Time(start), EventEndTime: awssdk.Time(end),
				Destination: &types.ReplayDestination{Arn: awssdk.String(busARN), FilterArns: []string{ruleARN}}}
		}

		out, err := eb.StartReplay(ctx, window("p2-replay"))
		require.NoError(t, err)
		assert.Equal(t, arnPrefix+"replay/p2-replay", awssdk.ToString(out.ReplayArn))
		assert.Equal(t, types.ReplayStateStarting, out.State)
		_, err = eb.StartReplay(ctx, window("p2-replay"))
		require.ErrorAs(t, err, &exists)
		assert.Equal(t, "Replay p2-replay already exists.", exists.ErrorMessage())

		bad := window("bad")
		bad.EventStartTime, bad.EventEndTime = bad.EventEndTime, bad.EventStartTime
		_, err = eb.StartReplay(ctx, bad)
		assert.Equal(t, "ValidationException", apiErrorCode(err))
		assert.ErrorContains(t, err, "EventStartTime must be before EventEndTime")
		bad = window("bad")
		bad.Destination.Arn = awssdk.String(arnPrefix + "event-bus/default")
		_, err = eb.StartReplay(ctx, bad)
		assert.Equal(t, "ValidationException", apiErrorCode(err))
		assert.ErrorContains(t, err, "Cross event bus replay is not permitted.")
		bad = window("bad")
		bad.Destination.FilterArns = []string{arnPrefix + "rule/p2/nope"}
		_, err = eb.StartReplay(ctx, bad)
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Rule nope does not exist on EventBus p2.", nf.ErrorMessage())
		bad = window("bad")
		bad.EventSourceArn = awssdk.String(arnPrefix + "archive/nope")
		_, err = eb.StartReplay(ctx, bad)
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Archive nope does not exist.", nf.ErrorMessage())

		var d *eventbridge.DescribeReplayOutput
		require.Eventually(t, func() bool {
			d, err = eb.DescribeReplay(ctx, &eventbridge.DescribeReplayInput{ReplayName: awssdk.String("p2-replay")})
			require.NoError(t, err)
			return d.State == types.ReplayStateCompleted
		}, 30*time.Second, 50*time.Millisecond, "the replay completes")
		assert.Equal(t, archiveARN, awssdk.ToString(d.EventSourceArn))
		assert.Equal(t, busARN, awssdk.ToString(d.Destination.Arn))
		assert.Equal(t, []string{ruleARN}, d.Destination.FilterArns)
		assert.Equal(t, start.UnixMilli(), awssdk.ToTime(d.EventStartTime).UnixMilli(), "the window as given, to the millisecond")
		assert.Equal(t, end.UnixMilli(), awssdk.ToTime(d.EventEndTime).UnixMilli(), "the window as given, to the millisecond")
		assert.NotNil(t, d.ReplayEndTime)
		assert.NotNil(t, d.EventLastReplayedTime)
		require.Eventually(t, func() bool {
			return len(rcv.at("/orders/r-1")) == 2 && len(rcv.at("/orders/r-2")) == 2 && len(rcv.at("/orders/r-3")) == 2
		}, 30*time.Second, 50*time.Millisecond, "each archived event arrives again, replayed")
		assert.Len(t, rcv.at("/orders/o-1"), 1, "an event put before the archive existed is not replayed")
		_, err = eb.DescribeReplay(ctx, &eventbridge.DescribeReplayInput{ReplayName: awssdk.String("nope")})
		require.ErrorAs(t, err, &nf)
		assert.Equal(t, "Replay nope does not exist.", nf.ErrorMessage())

		_, err = eb.CancelReplay(ctx, &eventbridge.CancelReplayInput{ReplayName: awssdk.String("p2-replay")})
		var illegal *types.IllegalStatusException
		require.ErrorAs(t, err, &illegal, "a replay that completed is not cancelled")
		_, err = eb.CancelReplay(ctx, &eventbridge.CancelReplayInput{ReplayName: awssdk.String("nope")})
		require.ErrorAs(t, err, &nf)

		// Cancel a replay right after it started (one that completed in between is started again, under another name).
		var cancelled string
		for i := 0; cancelled == "" && i < 3; i++ {
			name := "p2-cancel-" + string(rune('a'+i))
			_, err = eb.StartReplay(ctx, window(name))
			require.NoError(t, err)
			c, err := eb.CancelReplay(ctx, &eventbridge.CancelReplayInput{ReplayName: awssdk.String(name)})
			if errors.As(err, &illegal) {
				continue
			}
			require.NoError(t, err)
			assert.Equal(t, arnPrefix+"replay/"+name, awssdk.ToString(c.ReplayArn))
			assert.Contains(t, []types.ReplayState{types.ReplayStateCancelling, types.ReplayStateCancelled}, c.State)
			cancelled = name
		}
		require.NotEmpty(t, cancelled, "a replay was cancelled before it completed")
		require.Eventually(t, func() bool {
			d, err := eb.DescribeReplay(ctx, &eventbridge.DescribeReplayInput{ReplayName: awssdk.String(cancelled)})
			require.NoError(t, err)
			return d.State == types.ReplayStateCancelled
		}, 30*time.Second, 50*time.Millisecond, "the replay is cancelled")

		l, err := eb.ListReplays(ctx, &eventbridge.ListReplaysInput{State: types.ReplayStateCancelled})
		require.NoError(t, err)
		require.Len(t, l.Replays, 1)
		assert.Equal(t, cancelled, awssdk.ToString(l.Replays[0].ReplayName))
		l, err = eb.ListReplays(ctx, &eventbridge.ListReplaysInput{EventSourceArn: awssdk.String(archiveARN), NamePrefix: awssdk.String("p2-r")})
		require.NoError(t, err)
		require.Len(t, l.Replays, 1)
		assert.Equal(t, "p2-replay", awssdk.ToString(l.Replays[0].ReplayName))
		assert.Equal(t, types.ReplayStateCompleted, l.Replays[0].State)
		l, err = eb.ListReplays(ctx, &eventbridge.ListReplaysInput{EventSourceArn: awssdk.String(arnPrefix + "archive/nope")})
		require.NoError(t, err)
		assert.Empty(t, l.Replays)
		_, err = eb.ListReplays(ctx, &eventbridge.ListReplaysInput{State: "PAUSED"})
		assert.Equal(t, "ValidationException", apiErrorCode(err))
	})

	t.Run("a deauthorized connection dead-letters its calls until authorized again", func(t *testing.T) {
		_, err := eb.DeauthorizeConnection(ctx, &eventbridge.DeauthorizeConnectionInput{Name: awssdk.String("rcv-key")})
		require.NoError(t, err)
		// The reconciler gives the target's connector the connection's state within its interval (1 s here).
		var dl deadLetterList
		n := 0
		require.Eventually(t, func() bool {
			n++
			put(t, fmt.Sprintf("d-%d", n))
			dl = a.deadLetters("?bus=p2")
			return len(dl.DeadLetters) > 0
		}, 30*time.Second, 500*time.Millisecond, "events dead-lettered")
		assert.Contains(t, dl.DeadLetters[0].Reason, `connection "rcv-key" is DEAUTHORIZED`)
		for i := 1; i <= n; i++ {
			for _, call := range rcv.at(fmt.Sprintf("/orders/d-%d", i)) {
				assert.Equal(t, "k-secret-1", call.header.Get("X-Api-Key"), "a call leaves with the credentials or not at all")
			}
		}

		_, err = eb.UpdateConnection(ctx, &eventbridge.UpdateConnectionInput{Name: awssdk.String("rcv-key"),
			AuthParameters: &types.UpdateConnectionAuthRequestParameters{
				ApiKeyAuthParameters: &types.UpdateConnectionApiKeyAuthRequestParameters{ApiKeyValue: awssdk.String("k-secret-7")},
				InvocationHttpParameters: &types.ConnectionHttpParameters{HeaderParameters: []types.ConnectionHeaderParameter{
					{Key: awssdk.String("X-Team"), Value: awssdk.String("shop")},
					{Key: awssdk.String("X-Token"), Value: awssdk.String("t-secret-8"), IsValueSecret: true}}}}})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			put(t, "e-1")
			return len(rcv.at("/orders/e-1")) > 0
		}, 30*time.Second, 500*time.Millisecond, "delivered again")
		got := rcv.at("/orders/e-1")[0]
		assert.Equal(t, "k-secret-7", got.header.Get("X-Api-Key"))
		assert.Equal(t, "t-secret-8", got.header.Get("X-Token"))
	})

	t.Run("roles", func(t *testing.T) {
		viewer := awsClient(m, a.newAWSKey("p2-viewer", "viewer"), "us-east-1")
		_, err := viewer.DescribeArchive(ctx, &eventbridge.DescribeArchiveInput{ArchiveName: awssdk.String("p2-arch")})
		require.NoError(t, err)
		_, err = viewer.StartReplay(ctx, &eventbridge.StartReplayInput{ReplayName: awssdk.String("v"), EventSourceArn: awssdk.String(archiveARN),
			EventStartTime: awssdk.Time(time.Now().Add(-time.Minute)), EventEndTime: awssdk.Time(time.Now()),
			Destination: &types.ReplayDestination{Arn: awssdk.String(busARN)}})
		assert.Equal(t, "AccessDeniedException", apiErrorCode(err))
		_, err = viewer.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String("basic")})
		assert.Equal(t, "AccessDeniedException", apiErrorCode(err))
	})

	t.Run("clean up", func(t *testing.T) {
		_, err := eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: awssdk.String("to-api"), EventBusName: awssdk.String("p2"), Force: true})
		require.NoError(t, err)
		_, err = eb.DeleteApiDestination(ctx, &eventbridge.DeleteApiDestinationInput{Name: awssdk.String("orders-api")})
		require.NoError(t, err)
		for _, name := range []string{"rcv-key", "basic"} {
			_, err = eb.DeleteConnection(ctx, &eventbridge.DeleteConnectionInput{Name: awssdk.String(name)})
			require.NoError(t, err)
		}
		_, err = eb.DeleteArchive(ctx, &eventbridge.DeleteArchiveInput{ArchiveName: awssdk.String("p2-arch")})
		require.NoError(t, err)
		_, err = eb.DeleteArchive(ctx, &eventbridge.DeleteArchiveInput{ArchiveName: awssdk.String("p2-arch")})
		require.ErrorAs(t, err, &nf)
		_, err = eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: awssdk.String("p2")})
		require.NoError(t, err)
		l, err := eb.ListConnections(ctx, &eventbridge.ListConnectionsInput{})
		require.NoError(t, err)
		assert.Empty(t, l.Connections)
	})
}
