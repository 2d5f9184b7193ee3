package connector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
)

// Transform changes the records of a connector on their way to its sink, as Kafka Connect's single message
// transforms do. The runtime builds the transforms of a task once, when the task starts, and calls Apply for
// every record before the sink's Write.
type Transform interface {
	// Apply returns the records that replace e, in order: none filters e out (it is acked without being
	// written), one or several are written one after the other. Apply must not modify e, must be safe for
	// concurrent use and must not block on I/O. An error concerns the record, not the transform: the record is
	// given up at once (dropped or failing the task, as errors.tolerance says), since applying the transform
	// again would give the same result.
	Apply(ctx context.Context, e *event.Event) ([]*event.Event, error)
}

// NewTransformFunc builds one transform for one task. It must not do I/O and must be cheap enough to be called
// to validate a config. cfg reads the transform's own keys (transforms.<name>.<key> without the prefix) through
// its Spec. Problems of the config that the Spec cannot express are returned as FieldErrors naming those keys.
type NewTransformFunc func(cfg Values, env Env) (Transform, error)

// TransformPlugin is a transform plugin: a name (the value of transforms.<name>.type), a config Spec and a
// constructor.
type TransformPlugin struct {
	Name    string
	Version string
	Doc     string
	// Spec holds the transform's keys, written transforms.<name>.<key> in a connector config.
	Spec Spec
	New  NewTransformFunc
}

// NamedTransform is one transform of a connector, under the name its config gives it.
type NamedTransform struct {
	Name string
	Transform
}

// Config keys of transforms, as in Kafka Connect: transforms lists the names of a connector's transforms in the
// order they apply; each has its plugin in transforms.<name>.type and its own keys in transforms.<name>.<key>.
const (
	KeyTransforms    = "transforms"
	KeyTransformType = "type"
)

// TransformKey returns the config key of one key of the named transform: transforms.<name>.<key>.
func TransformKey(name, key string) string { return KeyTransforms + "." + name + "." + key }

var transformNameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// RegisterTransform adds p; it fails when p is incomplete or its name is taken.
func (r *Registry) RegisterTransform(p TransformPlugin) error {
	switch {
	case p.Name == "":
		return errors.New("connector: transform plugin without a name")
	case p.New == nil:
		return fmt.Errorf("connector: transform plugin %q without New", p.Name)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.transforms[p.Name]; ok {
		return fmt.Errorf("connector: transform plugin %q registered twice", p.Name)
	}
	r.transforms[p.Name] = p
	return nil
}

// LookupTransform returns the transform plugin named name.
func (r *Registry) LookupTransform(name string) (TransformPlugin, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.transforms[name]
	return p, ok
}

// TransformPlugins returns every transform plugin, sorted by name.
func (r *Registry) TransformPlugins() []TransformPlugin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := slices.Collect(maps.Values(r.transforms))
	slices.SortFunc(out, func(a, b TransformPlugin) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Transforms builds the transforms that cfg declares, in the order of its transforms key (none when the key is
// absent or empty). It checks every transform's type and keys against its plugin's Spec and runs the plugin's
// constructor. It returns every problem, each naming its full key (transforms, transforms.<name>.type,
// transforms.<name>.<key>); when there is one, no transform is returned.
func (r *Registry) Transforms(cfg map[string]string, env Env) ([]NamedTransform, FieldErrors) {
	list := strings.TrimSpace(cfg[KeyTransforms])
	if list == "" {
		return nil, nil
	}
	var (
		out  []NamedTransform
		errs FieldErrors
		seen = map[string]bool{}
	)
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		switch {
		case !transformNameRe.MatchString(name):
			errs = append(errs, FieldError{Key: KeyTransforms,
				Message: fmt.Sprintf("%q is not a transform name (1 to 64 characters of A-Z, a-z, 0-9, _ and -, separated by commas)", name)})
			continue
		case seen[name]:
			errs = append(errs, FieldError{Key: KeyTransforms, Message: fmt.Sprintf("transform %q is listed twice", name)})
			continue
		}
		seen[name] = true
		t, terrs := r.transform(cfg, name, env)
		if len(terrs) > 0 {
			errs = append(errs, terrs...)
			continue
		}
		out = append(out, NamedTransform{Name: name, Transform: t})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// transform builds the transform named name of cfg.
func (r *Registry) transform(cfg map[string]string, name string, env Env) (Transform, FieldErrors) {
	typeKey := TransformKey(name, KeyTransformType)
	typ := cfg[typeKey]
	if typ == "" {
		return nil, FieldErrors{{Key: typeKey, Message: "is required"}}
	}
	p, ok := r.LookupTransform(typ)
	if !ok {
		names := []string{}
		for _, q := range r.TransformPlugins() {
			names = append(names, q.Name)
		}
		return nil, FieldErrors{{Key: typeKey, Message: fmt.Sprintf("unknown transform %q (known: %v)", typ, names)}}
	}
	prefix := TransformKey(name, "")
	own := map[string]string{}
	for k, v := range cfg {
		if rest, ok := strings.CutPrefix(k, prefix); ok && rest != KeyTransformType {
			own[rest] = v
		}
	}
	prefixed := func(errs FieldErrors) FieldErrors {
		out := make(FieldErrors, len(errs))
		for i, e := range errs {
			out[i] = FieldError{Key: prefix + e.Key, Message: e.Message}
		}
		return out
	}
	if errs := p.Spec.Validate(own); len(errs) > 0 {
		return nil, prefixed(errs)
	}
	t, err := p.New(p.Spec.Values(own), env)
	if err != nil {
		var fe FieldErrors
		if errors.As(err, &fe) {
			return nil, prefixed(fe)
		}
		return nil, FieldErrors{{Key: typeKey, Message: err.Error()}}
	}
	return t, nil
}

// RegisterTransform adds p to the global registry. Call it from the init function of the plugin's package; it
// panics when p is incomplete or its name is taken, which is a programming error.
func RegisterTransform(p TransformPlugin) {
	if err := global.RegisterTransform(p); err != nil {
		panic(err)
	}
}
