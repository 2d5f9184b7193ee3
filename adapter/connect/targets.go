package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/bus"
	"github.com/eventbridge-go/eventbridge/domain/connection"
	"github.com/eventbridge-go/eventbridge/domain/rule"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/rpc"
)

// Plugin classes and keys of the worker's sinks the adapter writes (worker/plugins/http, log, eventbus).
const (
	classHTTP     = "http"
	classLog      = "log"
	classEventBus = "eventbus"
	keyBusID      = "bus.id"
)

// APIDestinations and Connections are what an api-destination target needs: its destination, and the
// connection that authorizes the calls.
type APIDestinations interface {
	Get(ctx context.Context, accountID, name string) (*apidestination.APIDestination, error)
}

// Connections finds a connection by name.
type Connections interface {
	Get(ctx context.Context, accountID, name string) (*connection.Connection, error)
}

// targetConfig builds the sink connector of one target of a rule: the common keys (its rule's subject, its
// consumer, its retry policy, where its dead letters go), the keys of its type, and its input transformer as the
// connector's one transform. Errors name what the target refers to that cannot be resolved (a bus or an API
// destination deleted since); the target's connector is then left as it is.
func (a *Adapter) targetConfig(ctx context.Context, b *bus.Bus, r *rule.Rule, t *target.Target) (map[string]string, error) {
	rp := t.RetryPolicy()
	cfg := map[string]string{
		rpc.ConfigTasksMax:          "1",
		rpc.ConfigTopics:            a.cfg.Physical.RuleSubject(b.ID(), r.ID()),
		"jetstream.stream":          a.cfg.Physical.BusStream(b.ID()),
		"jetstream.durable":         a.cfg.Physical.TargetConsumer(r.ID(), t.ID()),
		"jetstream.deliver.policy":  "new",
		"errors.tolerance":          "all",
		"errors.retry.max.attempts": strconv.Itoa(rp.MaximumRetryAttempts),
		"errors.retry.timeout":      strconv.FormatInt(int64(rp.MaximumEventAgeInSeconds)*1000, 10),
		"eb.bus.id":                 b.ID(),
		"eb.rule.id":                r.ID(),
		"eb.target.id":              t.ID(),
	}
	dlq := a.cfg.Physical.DLQSubject(b.AccountID())
	if name := t.DeadLetterBus(); name != "" {
		d, err := a.cfg.Buses.Get(ctx, b.AccountID(), name)
		if err != nil {
			return nil, fmt.Errorf("target %s: its dead-letter bus %q: %w", t.Name(), name, err)
		}
		dlq = a.cfg.Physical.BusIn(d.ID())
	}
	cfg["errors.deadletterqueue.topic.name"] = dlq

	switch t.Type() {
	case target.HTTP:
		h := t.HTTP()
		headers, _ := json.Marshal(h.Headers)
		if h.Headers == nil {
			headers = []byte("{}")
		}
		cfg[rpc.ConfigConnectorClass] = classHTTP
		cfg["url"], cfg["method"], cfg["headers"] = h.URL, h.Method, string(headers)
		cfg["mode"], cfg["timeout"] = string(h.Mode), h.Timeout.String()
	case target.Log:
		cfg[rpc.ConfigConnectorClass] = classLog
	case target.Bus:
		d, err := a.cfg.Buses.Get(ctx, b.AccountID(), t.Bus())
		if err != nil {
			return nil, fmt.Errorf("target %s: its bus %q: %w", t.Name(), t.Bus(), err)
		}
		cfg[rpc.ConfigConnectorClass] = classEventBus
		cfg[keyBusID] = d.ID()
	case target.APIDestination:
		if err := a.apiDestinationConfig(ctx, b.AccountID(), t, cfg); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("target %s: type %q has no connector", t.Name(), t.Type())
	}
	if tr := t.Transformer(); !tr.IsZero() {
		// Templates hold < and >: written as they are (not \u003c), so the config reads as the target declares it.
		var spec bytes.Buffer
		enc := json.NewEncoder(&spec)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(tr) // strings and maps of strings: cannot fail
		cfg[keyTransforms] = transformInput
		cfg[keyTransformInputType] = transformInputType
		cfg[keyTransformInputSpec] = strings.TrimSuffix(spec.String(), "\n")
	}
	return cfg, nil
}

// apiDestinationConfig writes the http sink keys of an api-destination target: the destination's endpoint,
// method and rate limit, and its connection's authorization and invocation parameters. Secret values go as the
// connection holds them, enc:v1 ciphertext that the task decrypts.
func (a *Adapter) apiDestinationConfig(ctx context.Context, accountID string, t *target.Target, cfg map[string]string) error {
	if a.cfg.APIDestinations == nil || a.cfg.Connections == nil {
		return fmt.Errorf("target %s: api-destination targets are not wired in this deployment", t.Name())
	}
	d, err := a.cfg.APIDestinations.Get(ctx, accountID, t.APIDestination())
	if err != nil {
		return fmt.Errorf("target %s: its API destination %q: %w", t.Name(), t.APIDestination(), err)
	}
	if n := d.PathParameters(); n != len(t.PathParameterValues()) {
		return fmt.Errorf("target %s: API destination %q has %d path parameters (*); the target fills %d",
			t.Name(), d.Name(), n, len(t.PathParameterValues()))
	}
	if n := d.PathParameters(); n > 0 {
		b, _ := json.Marshal(t.PathParameterValues())
		cfg["url.path_parameters"] = string(b)
	}
	c, err := a.cfg.Connections.Get(ctx, accountID, d.Connection().Name)
	if err != nil {
		return fmt.Errorf("target %s: the connection %q of API destination %q: %w", t.Name(), d.Connection().Name, d.Name(), err)
	}
	spec := c.Sealed()
	endpoint, err := url.Parse(d.InvocationEndpoint())
	if err != nil {
		return fmt.Errorf("target %s: endpoint of API destination %q: %w", t.Name(), d.Name(), err)
	}
	headers, secretHeaders := map[string]string{}, map[string]string{}
	inv := spec.InvocationHTTPParameters
	if err := plain("invocation", inv); err != nil {
		return fmt.Errorf("target %s: connection %q: %w", t.Name(), c.Name(), err)
	}
	for _, p := range inv.HeaderParameters {
		if !p.IsValueSecret {
			headers[p.Key] = p.Value
			continue
		}
		if a.cfg.Secrets == nil {
			return fmt.Errorf("target %s: connection %q has secret headers and this deployment has no master key", t.Name(), c.Name())
		}
		v, err := a.cfg.Secrets.Open(p.Value)
		if err != nil {
			return fmt.Errorf("target %s: connection %q: secret header %q: %w", t.Name(), c.Name(), p.Key, err)
		}
		secretHeaders[p.Key] = v
	}
	if len(secretHeaders) > 0 {
		b, _ := json.Marshal(secretHeaders)
		sealed, err := a.cfg.Secrets.Seal(string(b))
		if err != nil {
			return fmt.Errorf("target %s: sealing the secret headers of connection %q: %w", t.Name(), c.Name(), err)
		}
		cfg["secret_headers"] = sealed
	}
	if len(inv.QueryStringParameters) > 0 {
		q := endpoint.Query()
		for _, p := range inv.QueryStringParameters {
			q.Add(p.Key, p.Value)
		}
		endpoint.RawQuery = q.Encode()
	}
	hb, _ := json.Marshal(headers)
	cfg[rpc.ConfigConnectorClass] = classHTTP
	cfg["url"], cfg["method"], cfg["headers"] = endpoint.String(), d.HTTPMethod(), string(hb)
	cfg["rate_limit_per_second"] = strconv.Itoa(d.InvocationRateLimitPerSecond())
	switch spec.AuthorizationType {
	case connection.Basic:
		cfg["auth.type"] = "basic"
		cfg["auth.username"], cfg["auth.password"] = spec.Basic.Username, spec.Basic.Password
	case connection.APIKey:
		cfg["auth.type"] = "api_key"
		cfg["auth.api_key.header"], cfg["auth.api_key.value"] = spec.APIKey.APIKeyName, spec.APIKey.APIKeyValue
	case connection.OAuthClientCredentials:
		o := spec.OAuth
		if o.HTTPMethod != "" && o.HTTPMethod != "POST" {
			return fmt.Errorf("target %s: connection %q: OAuth token requests are sent with POST; %s is not supported yet",
				t.Name(), c.Name(), o.HTTPMethod)
		}
		if err := plain("oauth", o.HTTPParameters); err != nil {
			return fmt.Errorf("target %s: connection %q: %w", t.Name(), c.Name(), err)
		}
		extra := map[string]string{}
		for _, p := range append(append([]connection.Parameter{}, o.HTTPParameters.BodyParameters...), o.HTTPParameters.QueryStringParameters...) {
			extra[p.Key] = p.Value
		}
		eb, _ := json.Marshal(extra)
		cfg["auth.type"] = "oauth_client_credentials"
		cfg["auth.oauth.token_url"], cfg["auth.oauth.client_id"] = o.AuthorizationEndpoint, o.ClientID
		cfg["auth.oauth.client_secret"], cfg["auth.oauth.scopes"] = o.ClientSecret, strings.Join(o.Scopes, " ")
		cfg["auth.oauth.extra_params"] = string(eb)
	}
	return nil
}

// plain refuses parameters the http sink cannot send yet: secret query and body parameters, secret OAuth
// parameters, and invocation body parameters. (Secret invocation headers are sent: secret_headers.)
func plain(what string, p connection.HTTPParameters) error {
	lists := [][]connection.Parameter{p.QueryStringParameters, p.BodyParameters}
	if what != "invocation" {
		lists = append(lists, p.HeaderParameters)
	}
	for _, list := range lists {
		for _, q := range list {
			if q.IsValueSecret {
				return fmt.Errorf("its secret %s parameter %q cannot be sent yet", what, q.Key)
			}
		}
	}
	if what == "invocation" && len(p.BodyParameters) > 0 {
		return fmt.Errorf("its invocation body parameters cannot be sent yet")
	}
	if what == "oauth" && len(p.HeaderParameters) > 0 {
		return fmt.Errorf("its OAuth header parameters cannot be sent yet")
	}
	return nil
}
