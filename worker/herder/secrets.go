package herder

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/eventbridge-go/eventbridge/rpc"
	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Secret values of connector configs (the fields of a plugin's or transform's spec marked Secret) are stored,
// listed and returned only as rpc.EncryptSecret ciphertext (enc:v1:...) under the master key, which the workers
// of an installation share. Create and PutConfig encrypt the plaintext ones they are given; a task decrypts them
// when it starts (prepare).

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

// seal returns a copy of cfg whose plaintext secret values are encrypted under the master key. A value already
// encrypted is kept as it is; a plaintext value equal to what old holds (encrypted) under the same key keeps
// old's ciphertext, so that putting the same config twice changes nothing. A plaintext secret without a master
// key is a config error naming the key.
func (h *Herder) seal(cfg, old map[string]string) (map[string]string, error) {
	out := maps.Clone(cfg)
	var errs connector.FieldErrors
	for _, k := range h.secretKeys(cfg) {
		v, ok := cfg[k]
		if !ok || v == "" || rpc.IsEncrypted(v) {
			continue
		}
		if len(h.cfg.MasterKey) == 0 {
			errs = append(errs, connector.FieldError{Key: k, Message: "is a secret and this worker has no master key " +
				"to encrypt it: start the worker with --master-key (env EB_MASTER_KEY)"})
			continue
		}
		if prev := old[k]; rpc.IsEncrypted(prev) {
			if p, err := rpc.DecryptSecret(h.cfg.MasterKey, prev); err == nil && p == v {
				out[k] = prev
				continue
			}
		}
		enc, err := rpc.EncryptSecret(h.cfg.MasterKey, v)
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

// open returns a copy of cfg whose encrypted secret values are decrypted, and the plaintexts of every secret
// value (for redact). A value that does not decrypt is a problem of its key, whose message does not contain the
// value; it stays encrypted in the copy.
func (h *Herder) open(cfg map[string]string) (map[string]string, []string, connector.FieldErrors) {
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
			errs = append(errs, connector.FieldError{Key: k, Message: "is encrypted and this worker has no master key " +
				"to decrypt it: start the worker with --master-key (env EB_MASTER_KEY)"})
			continue
		}
		p, err := rpc.DecryptSecret(h.cfg.MasterKey, v)
		if err != nil {
			errs = append(errs, connector.FieldError{Key: k, Message: "cannot be decrypted: " + err.Error()})
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
