package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
		rpc.ConfigTopics:            a.cfg.Physical.RuleSubject(b.ID(), r.ID()) + "," + a.cfg.Physical.RedriveSubject(b.ID(), r.ID(), t.ID()),
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
		plain, secret := map[string]string{}, map[string]string{}
		for k, v := range h.Headers {
			if h.IsSecretHeader(k) {
				secret[k] = v
			} else {
				plain[k] = v
			}
		}
		// The secret headers' values go sealed together as one value of the http sink's secret key, which the task
		// opens; the plain ones in the clear.
		if err := a.sealTogether(cfg, keySecretHeaders, secret); err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name(), err)
		}
		headers, _ := json.Marshal(plain)
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
		if !t.Type().IsPlugin() {
			return nil, fmt.Errorf("target %s: type %q has no connector", t.Name(), t.Type())
		}
		// The plugin's own keys (secret values sealed as stored; the task opens them); the domain refuses keys the
		// adapter sets.
		maps.Copy(cfg, t.Config())
		cfg[rpc.ConfigConnectorClass] = string(t.Type())
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
// connection holds them, sealed again for the target's connector (bindSecrets) when the config is complete.
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
	inv := spec.InvocationHTTPParameters
	if err := noSecret("query", inv.QueryStringParameters); err != nil {
		return fmt.Errorf("target %s: connection %q: %w", t.Name(), c.Name(), err)
	}
	headers, err := a.params(cfg, keySecretHeaders, inv.HeaderParameters)
	if err != nil {
		return fmt.Errorf("target %s: connection %q: invocation headers: %w", t.Name(), c.Name(), err)
	}
	body, err := a.params(cfg, "secret_body_parameters", inv.BodyParameters)
	if err != nil {
		return fmt.Errorf("target %s: connection %q: invocation body parameters: %w", t.Name(), c.Name(), err)
	}
	if len(body) > 0 {
		bb, _ := json.Marshal(body)
		cfg["body_parameters"] = string(bb)
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
		if len(o.HTTPParameters.HeaderParameters) > 0 {
			return fmt.Errorf("target %s: connection %q: OAuth header parameters cannot be sent yet", t.Name(), c.Name())
		}
		if err := noSecret("OAuth query", o.HTTPParameters.QueryStringParameters); err != nil {
			return fmt.Errorf("target %s: connection %q: %w", t.Name(), c.Name(), err)
		}
		extra, err := a.params(cfg, "auth.oauth.secret_extra_params", o.HTTPParameters.BodyParameters)
		if err != nil {
			return fmt.Errorf("target %s: connection %q: OAuth body parameters: %w", t.Name(), c.Name(), err)
		}
		tokenURL := o.AuthorizationEndpoint
		if qs := o.HTTPParameters.QueryStringParameters; len(qs) > 0 {
			u, err := url.Parse(tokenURL)
			if err != nil {
				return fmt.Errorf("target %s: connection %q: token endpoint: %w", t.Name(), c.Name(), err)
			}
			q := u.Query()
			for _, p := range qs {
				q.Add(p.Key, p.Value)
			}
			u.RawQuery = q.Encode()
			tokenURL = u.String()
		}
		eb, _ := json.Marshal(extra)
		cfg["auth.type"] = "oauth_client_credentials"
		cfg["auth.oauth.token_url"], cfg["auth.oauth.client_id"] = tokenURL, o.ClientID
		cfg["auth.oauth.client_secret"], cfg["auth.oauth.scopes"] = o.ClientSecret, strings.Join(o.Scopes, " ")
		cfg["auth.oauth.extra_params"] = string(eb)
	}
	return nil
}

// params returns the plain parameters of list as a map, and stores the secret ones, opened and sealed again
// together as one JSON object, under secretKey of cfg (the http sink decrypts it as a whole).
func (a *Adapter) params(cfg map[string]string, secretKey string, list []connection.Parameter) (map[string]string, error) {
	plainValues, secret := map[string]string{}, map[string]string{}
	for _, p := range list {
		if p.IsValueSecret {
			secret[p.Key] = p.Value
		} else {
			plainValues[p.Key] = p.Value
		}
	}
	return plainValues, a.sealTogether(cfg, secretKey, secret)
}

// keySecretHeaders is the http sink's key of headers whose values are secret (worker/plugins/http).
const keySecretHeaders = "secret_headers"

// sealTogether opens each sealed value of sealed and stores them, sealed again together as one JSON object, under
// key of cfg (the http sink opens it as a whole); nothing when sealed is empty. Errors name the entry, never a
// value.
func (a *Adapter) sealTogether(cfg map[string]string, key string, sealed map[string]string) error {
	if len(sealed) == 0 {
		return nil
	}
	if a.cfg.Secrets == nil {
		return fmt.Errorf("secret values: this deployment has no master key")
	}
	plain := make(map[string]string, len(sealed))
	for k, v := range sealed {
		p, err := a.cfg.Secrets.Open(v)
		if err != nil {
			return fmt.Errorf("secret %q: %w", k, err)
		}
		plain[k] = p
	}
	b, _ := json.Marshal(plain) // a map of strings always marshals
	s, err := a.cfg.Secrets.Seal(string(b))
	if err != nil {
		return fmt.Errorf("sealing secret values: %w", err)
	}
	cfg[key] = s
	return nil
}

// noSecret refuses secret query parameters: a URL is not a place for secrets (it shows in logs and errors).
func noSecret(what string, list []connection.Parameter) error {
	for _, p := range list {
		if p.IsValueSecret {
			return fmt.Errorf("secret %s parameter %q cannot be sent: a URL is not a place for secrets", what, p.Key)
		}
	}
	return nil
}
