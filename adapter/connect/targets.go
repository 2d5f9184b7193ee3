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

	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/apidestination"
	"github.com/eventbridge-go/eventbridge/domain/awsevent"
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
	var secretKeys []string // the keys set to a secret's plaintext, sealed for the connector at the end
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
	a.withLog(b, cfg)

	switch t.Type() {
	case target.HTTP:
		h := t.HTTP()
		plain := map[string]string{}
		for k, v := range h.Headers {
			if !h.IsSecretHeader(k) {
				plain[k] = v
			}
		}
		// The secret headers' values go together as one value of the http sink's secret key, which the task
		// opens; the plain ones in the clear.
		if len(plain) < len(h.Headers) {
			secret, err := t.OpenedSecretHeaders(a.opener())
			if err != nil {
				return nil, err
			}
			sh, _ := json.Marshal(secret) // a map of strings always marshals
			cfg[keySecretHeaders] = string(sh)
			secretKeys = append(secretKeys, keySecretHeaders)
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
		keys, err := a.apiDestinationConfig(ctx, b.AccountID(), t, cfg)
		if err != nil {
			return nil, err
		}
		secretKeys = append(secretKeys, keys...)
	default:
		if !t.Type().IsPlugin() {
			return nil, fmt.Errorf("target %s: type %q has no connector", t.Name(), t.Type())
		}
		// The plugin's own keys, its secrets opened; the domain refuses keys the adapter sets.
		pc, keys, err := t.OpenedConfig(a.opener())
		if err != nil {
			return nil, err
		}
		secretKeys = append(secretKeys, keys...)
		maps.Copy(cfg, pc)
		cfg[rpc.ConfigConnectorClass] = string(t.Type())
	}
	inAWSFormat := t.Format() == target.FormatAWS
	if tr := t.Transformer(); !tr.IsZero() || inAWSFormat {
		// Templates hold < and >: written as they are (not \u003c), so the config reads as the target declares it.
		var spec bytes.Buffer
		enc := json.NewEncoder(&spec)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(tr) // strings and maps of strings: cannot fail
		cfg[keyTransforms] = transformInput
		cfg[keyTransformInputType] = transformInputType
		cfg[keyTransformInputSpec] = strings.TrimSuffix(spec.String(), "\n")
		if inAWSFormat {
			// The transform delivers AWS's envelope (or sees it), with the rule and the account's AWS identity.
			region, number := a.awsRegion(), account.AWSAccountID(b.AccountID())
			cfg[keyTransformInput+"format"] = string(target.FormatAWS)
			cfg[keyTransformInput+"rule.name"] = r.Name()
			cfg[keyTransformInput+"rule.arn"] = awsevent.RuleARN(region, number, b.Name(), r.Name())
			cfg[keyTransformInput+"aws.account"] = number
			cfg[keyTransformInput+"aws.region"] = region
		}
	}
	return a.sealFor(TargetName(b.AccountID(), b.Name(), r.Name(), t.Name()), cfg, secretKeys)
}

// apiDestinationConfig writes the http sink keys of an api-destination target: the destination's endpoint,
// method and rate limit, and its connection's authorization and invocation parameters. Secret values are written
// opened, and their keys returned, for targetConfig to seal them for the target's connector.
func (a *Adapter) apiDestinationConfig(ctx context.Context, accountID string, t *target.Target, cfg map[string]string) (secretKeys []string, err error) {
	if a.cfg.APIDestinations == nil || a.cfg.Connections == nil {
		return nil, fmt.Errorf("target %s: api-destination targets are not wired in this deployment", t.Name())
	}
	d, err := a.cfg.APIDestinations.Get(ctx, accountID, t.APIDestination())
	if err != nil {
		return nil, fmt.Errorf("target %s: its API destination %q: %w", t.Name(), t.APIDestination(), err)
	}
	if n := d.PathParameters(); n != len(t.PathParameterValues()) {
		return nil, fmt.Errorf("target %s: API destination %q has %d path parameters (*); the target fills %d",
			t.Name(), d.Name(), n, len(t.PathParameterValues()))
	}
	if n := d.PathParameters(); n > 0 {
		b, _ := json.Marshal(t.PathParameterValues())
		cfg["url.path_parameters"] = string(b)
	}
	c, err := a.cfg.Connections.Get(ctx, accountID, d.Connection().Name)
	if err != nil {
		return nil, fmt.Errorf("target %s: the connection %q of API destination %q: %w", t.Name(), d.Connection().Name, d.Name(), err)
	}
	endpoint, err := url.Parse(d.InvocationEndpoint())
	if err != nil {
		return nil, fmt.Errorf("target %s: endpoint of API destination %q: %w", t.Name(), d.Name(), err)
	}
	cfg[rpc.ConfigConnectorClass] = classHTTP
	cfg["rate_limit_per_second"] = strconv.Itoa(d.InvocationRateLimitPerSecond())
	if c.State() == connection.Deauthorized {
		// Its secrets are gone: the sink sends nothing and fails every event, which is dead-lettered with the reason.
		cfg["url"], cfg["method"], cfg["headers"] = endpoint.String(), d.HTTPMethod(), "{}"
		cfg["auth.type"], cfg["auth.connection"] = "deauthorized", c.Name()
		return nil, nil
	}
	spec, err := c.Opened(a.opener())
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	inv := spec.InvocationHTTPParameters
	if err := noSecret("query", inv.QueryStringParameters); err != nil {
		return nil, fmt.Errorf("target %s: connection %q: %w", t.Name(), c.Name(), err)
	}
	headers, err := params(cfg, keySecretHeaders, inv.HeaderParameters, &secretKeys)
	if err != nil {
		return nil, fmt.Errorf("target %s: connection %q: invocation headers: %w", t.Name(), c.Name(), err)
	}
	body, err := params(cfg, "secret_body_parameters", inv.BodyParameters, &secretKeys)
	if err != nil {
		return nil, fmt.Errorf("target %s: connection %q: invocation body parameters: %w", t.Name(), c.Name(), err)
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
	cfg["url"], cfg["method"], cfg["headers"] = endpoint.String(), d.HTTPMethod(), string(hb)
	switch spec.AuthorizationType {
	case connection.Basic:
		cfg["auth.type"] = "basic"
		cfg["auth.username"], cfg["auth.password"] = spec.Basic.Username, spec.Basic.Password
		secretKeys = append(secretKeys, "auth.password")
	case connection.APIKey:
		cfg["auth.type"] = "api_key"
		cfg["auth.api_key.header"], cfg["auth.api_key.value"] = spec.APIKey.APIKeyName, spec.APIKey.APIKeyValue
		secretKeys = append(secretKeys, "auth.api_key.value")
	case connection.OAuthClientCredentials:
		o := spec.OAuth
		if o.HTTPMethod != "" && o.HTTPMethod != "POST" {
			return nil, fmt.Errorf("target %s: connection %q: OAuth token requests are sent with POST; %s is not supported yet",
				t.Name(), c.Name(), o.HTTPMethod)
		}
		if len(o.HTTPParameters.HeaderParameters) > 0 {
			return nil, fmt.Errorf("target %s: connection %q: OAuth header parameters cannot be sent yet", t.Name(), c.Name())
		}
		if err := noSecret("OAuth query", o.HTTPParameters.QueryStringParameters); err != nil {
			return nil, fmt.Errorf("target %s: connection %q: %w", t.Name(), c.Name(), err)
		}
		extra, err := params(cfg, "auth.oauth.secret_extra_params", o.HTTPParameters.BodyParameters, &secretKeys)
		if err != nil {
			return nil, fmt.Errorf("target %s: connection %q: OAuth body parameters: %w", t.Name(), c.Name(), err)
		}
		tokenURL := o.AuthorizationEndpoint
		if qs := o.HTTPParameters.QueryStringParameters; len(qs) > 0 {
			u, err := url.Parse(tokenURL)
			if err != nil {
				return nil, fmt.Errorf("target %s: connection %q: token endpoint: %w", t.Name(), c.Name(), err)
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
		secretKeys = append(secretKeys, "auth.oauth.client_secret")
	}
	return secretKeys, nil
}

// params returns the plain parameters of list as a map, and stores the secret ones (opened) together as one JSON
// object under secretKey of cfg, which it adds to secretKeys (the http sink opens it as a whole).
func params(cfg map[string]string, secretKey string, list []connection.Parameter, secretKeys *[]string) (map[string]string, error) {
	plainValues, secret := map[string]string{}, map[string]string{}
	for _, p := range list {
		if p.IsValueSecret {
			secret[p.Key] = p.Value
		} else {
			plainValues[p.Key] = p.Value
		}
	}
	if len(secret) > 0 {
		b, _ := json.Marshal(secret) // a map of strings always marshals
		cfg[secretKey] = string(b)
		*secretKeys = append(*secretKeys, secretKey)
	}
	return plainValues, nil
}

// keySecretHeaders is the http sink's key of headers whose values are secret (worker/plugins/http).
const keySecretHeaders = "secret_headers"

// noSecret refuses secret query parameters: a URL is not a place for secrets (it shows in logs and errors).
func noSecret(what string, list []connection.Parameter) error {
	for _, p := range list {
		if p.IsValueSecret {
			return fmt.Errorf("secret %s parameter %q cannot be sent: a URL is not a place for secrets", what, p.Key)
		}
	}
	return nil
}
