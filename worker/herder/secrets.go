package herder

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
	ebjs "github.com/eventbridge-go/eventbridge/worker/jetstream"
)

// Secret values of connector configs (the fields of a plugin's or transform's spec marked Secret) are stored,
// listed and returned only sealed (rpc.SealSecret, enc:v2:...) under the master key, which the workers of an
// installation share, for the connector and the config key they belong to (rpc.ConnectorBinding): a value copied
// into another connector's config, or under another key, does not open. Create and PutConfig seal the plaintext
// ones they are given and refuse a sealed value that is not this connector's and key's; a task opens them when it
// starts (prepare). Values of version 1 (enc:v1:, bound to nothing) are sealed again by MigrateSecrets at start and
// otherwise refused.

// hidden replaces a secret value where one would be shown.
const hidden = "[hidden]"

// secretKeys returns the keys of cfg's secret fields: those of the plugin named by connector.class and those of
// the transforms cfg declares, prefixed with transforms.<name>.
func (h *Herder) secretKeys(cfg map[string]string) []string {
	var keys []string
	if p, ok := h.cfg.Registry.Lookup(cfg[connector.KeyClass]); ok {
		for _, f := range p.FullSpec() {
			if f.Secret {
				keys = append(keys, f.Name)
			}
		}
	}
	for name := range strings.SplitSeq(cfg[connector.KeyTransforms], ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		tp, ok := h.cfg.Registry.LookupTransform(cfg[connector.TransformKey(name, connector.KeyTransformType)])
		if !ok {
			continue
		}
		for _, f := range tp.Spec {
			if f.Secret {
				keys = append(keys, connector.TransformKey(name, f.Name))
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// binding is the owner of the secret value of key in the config of the connector name.
func (h *Herder) binding(name, key string) rpc.Binding {
	return rpc.ConnectorBinding(h.cfg.Names.Cluster, name, key)
}

// seal returns a copy of the config cfg of the connector name whose plaintext secret values are sealed for the
// connector and their key. A sealed value is kept when it opens as this connector's and key's, and refused
// otherwise (sealed for another connector, or in version 1); a plaintext value equal to what old holds sealed keeps
// old's value, so that putting the same config twice changes nothing. A plaintext secret without a master key is a
// config error naming the key.
func (h *Herder) seal(name string, cfg, old map[string]string) (map[string]string, error) {
	out := maps.Clone(cfg)
	var errs connector.FieldErrors
	for _, k := range h.secretKeys(cfg) {
		v, ok := cfg[k]
		if !ok || v == "" {
			continue
		}
		if len(h.cfg.MasterKey) == 0 {
			errs = append(errs, connector.FieldError{Key: k, Message: "is a secret and this worker has no master key " +
				"to seal it: start the worker with --master-key (env EB_MASTER_KEY)"})
			continue
		}
		if rpc.IsEncrypted(v) {
			if _, err := rpc.OpenSecret(h.cfg.MasterKey, h.binding(name, k), v); err != nil {
				errs = append(errs, connector.FieldError{Key: k, Message: "is a sealed value that is not this connector's " +
					"and key's (sealed for another connector or key, in version 1, or with another master key): give the plaintext"})
			}
			continue
		}
		if prev := old[k]; rpc.IsEncrypted(prev) {
			if p, err := rpc.OpenSecret(h.cfg.MasterKey, h.binding(name, k), prev); err == nil && p == v {
				out[k] = prev
				continue
			}
		}
		enc, err := rpc.SealSecret(h.cfg.MasterKey, h.binding(name, k), v)
		if err != nil {
			errs = append(errs, connector.FieldError{Key: k, Message: err.Error()})
			continue
		}
		out[k] = enc
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// open returns a copy of the config cfg of the connector name whose sealed secret values are opened, and the
// plaintexts of every secret value (for redact). A value that does not open for this connector and key is a
// problem of its key, whose message does not contain the value; it stays sealed in the copy. name is empty when a
// config is validated without a connector (PUT /connector-plugins/{p}/config/validate without a name key): a
// sealed value opens for no connector then.
func (h *Herder) open(name string, cfg map[string]string) (map[string]string, []string, connector.FieldErrors) {
	out := maps.Clone(cfg)
	var (
		secrets []string
		errs    connector.FieldErrors
	)
	for _, k := range h.secretKeys(cfg) {
		v, ok := cfg[k]
		if !ok || v == "" {
			continue
		}
		if !rpc.IsEncrypted(v) {
			secrets = append(secrets, v)
			continue
		}
		if len(h.cfg.MasterKey) == 0 {
			errs = append(errs, connector.FieldError{Key: k, Message: "is sealed and this worker has no master key " +
				"to open it: start the worker with --master-key (env EB_MASTER_KEY)"})
			continue
		}
		p, err := rpc.OpenSecret(h.cfg.MasterKey, h.binding(name, k), v)
		if err != nil {
			errs = append(errs, connector.FieldError{Key: k, Message: "cannot be opened: " + err.Error()})
			continue
		}
		out[k] = p
		secrets = append(secrets, p)
	}
	return out, secrets, errs
}

// redactString replaces every secret of s with [hidden]. Secrets shorter than 3 characters are left: replacing
// them would garble messages more than it hides.
func redactString(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 3 {
			s = strings.ReplaceAll(s, v, hidden)
		}
	}
	return s
}

// redact returns err with every secret of its message replaced; field errors stay field errors.
func redact(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	var fe connector.FieldErrors
	if errors.As(err, &fe) {
		out := make(connector.FieldErrors, len(fe))
		for i, e := range fe {
			out[i] = connector.FieldError{Key: e.Key, Message: redactString(e.Message, secrets)}
		}
		if fe.Error() == err.Error() { // err is the field errors themselves
			return out
		}
	}
	if msg := err.Error(); redactString(msg, secrets) != msg {
		return errors.New(redactString(msg, secrets))
	}
	return err
}

// redactor returns a func that replaces the secret values of the decrypted config cfg in a text.
func (h *Herder) redactor(cfg map[string]string) func(string) string {
	var secrets []string
	for _, k := range h.secretKeys(cfg) {
		if v := cfg[k]; v != "" {
			secrets = append(secrets, v)
		}
	}
	return func(s string) string { return redactString(s, secrets) }
}

// redact returns err with the secret values of the decrypted config cfg replaced.
func (h *Herder) redact(err error, cfg map[string]string) error {
	var secrets []string
	for _, k := range h.secretKeys(cfg) {
		if v := cfg[k]; v != "" {
			secrets = append(secrets, v)
		}
	}
	return redact(err, secrets)
}

// migrateSecrets seals again, for their connector and key, the secret values that configs hold in version 1
// (enc:v1:, bound to nothing: what releases before version 2 wrote). It runs at Start, once the records are read
// and before any task starts. A record another worker changed meanwhile is left to that worker (its own Start
// migrates what is left); a value that does not decrypt is left as it is, and its connector fails to start, naming
// the key.
func (h *Herder) migrateSecrets(ctx context.Context) {
	if len(h.cfg.MasterKey) == 0 {
		return
	}
	h.mu.Lock()
	entries := slices.Collect(maps.Values(h.records))
	h.mu.Unlock()
	for _, e := range entries {
		cfg, changed := maps.Clone(e.rec.Config), false
		for _, k := range h.secretKeys(cfg) {
			v := cfg[k]
			if !rpc.IsV1(v) {
				continue
			}
			p, err := rpc.DecryptSecret(h.cfg.MasterKey, v)
			if err != nil {
				h.log.Warn("a version 1 secret of a connector does not decrypt with the master key; left as it is",
					"connector", e.rec.Name, "key", k)
				continue
			}
			if cfg[k], err = rpc.SealSecret(h.cfg.MasterKey, h.binding(e.rec.Name, k), p); err != nil {
				h.log.Warn("sealing a secret of a connector again", "connector", e.rec.Name, "key", k, "err", err)
				continue
			}
			changed = true
		}
		if !changed {
			continue
		}
		rec := e.rec
		rec.Config = cfg
		rev, err := h.kv.Update(ctx, rec.Name, mustJSON(rec), e.rev)
		if err != nil {
			if !ebjs.IsRevisionConflict(err) {
				h.log.Warn("storing a connector's secrets sealed again", "connector", rec.Name, "err", err)
			}
			continue
		}
		h.remember(rec, rev)
		h.log.Info("sealed a connector's secrets again for it (version 2)", "connector", rec.Name)
	}
}
