package connect

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"strings"

	"github.com/eventbridge-go/eventbridge/domain"
	"github.com/eventbridge-go/eventbridge/domain/target"
	"github.com/eventbridge-go/eventbridge/rpc"
)

var _ target.PluginChecker = (*Adapter)(nil)

// secretKeyType is the type of a secret key in a plugin's Kafka-Connect-style config definition.
const secretKeyType = "PASSWORD"

// plugin finds the plugin class of kind (rpc.TypeSource or rpc.TypeSink) among the runtime's plugins; ok is
// false, with the classes of that kind there are, when it has none.
func (a *Adapter) plugin(ctx context.Context, kind, class string) (classes []string, ok bool, err error) {
	plugins, err := a.cfg.Runtime.ListPlugins(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, p := range plugins {
		if p.Type != kind {
			continue
		}
		if p.Class == class {
			return nil, true, nil
		}
		classes = append(classes, p.Class)
	}
	sort.Strings(classes)
	return classes, false, nil
}

// secretKeys returns the keys the plugin marks secret.
func (a *Adapter) secretKeys(ctx context.Context, class string) ([]string, error) {
	defs, err := a.cfg.Runtime.PluginConfig(ctx, class)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, d := range defs {
		if d.Type == secretKeyType {
			keys = append(keys, d.Name)
		}
	}
	return keys, nil
}

// validateConfig runs the plugin's validate endpoint on cfg and returns every problem as "config.<key>:
// <message>" (keys in the plugin's order), with the first key; none when the config is valid.
func (a *Adapter) validateConfig(ctx context.Context, class string, cfg map[string]string) (problems []string, first string, err error) {
	infos, err := a.cfg.Runtime.ValidateConfig(ctx, class, cfg)
	if err != nil {
		if rpc.IsBadRequest(err) {
			return []string{"config: " + err.Error()}, "", nil
		}
		return nil, "", err
	}
	for _, ci := range infos.Configs {
		for _, msg := range ci.Value.Errors {
			if first == "" {
				first = ci.Definition.Name
			}
			problems = append(problems, "config."+ci.Definition.Name+": "+msg)
		}
	}
	if infos.ErrorCount > 0 && len(problems) == 0 {
		problems = []string{fmt.Sprintf("the plugin %s found %d problem(s)", class, infos.ErrorCount)}
	}
	return problems, first, nil
}

// unavailable maps a failure to reach the runtime to domain.ErrUnavailable saying what could not be done.
func unavailable(err error, what string) error {
	err = runtimeErr(err, nil)
	if de, ok := domain.As(err); ok && de.Kind == domain.KindUnavailable {
		e := domain.ErrUnavailable.With("the worker runtime cannot be reached to %s; try again", what)
		e.Err = err
		return e
	}
	return err
}

// validationSinkKeys stand for the keys the adapter sets on every target connector while a plugin target's own
// keys are validated.
var validationSinkKeys = map[string]string{
	rpc.ConfigTasksMax:         "1",
	rpc.ConfigTopics:           "eb.validate.rule",
	"jetstream.stream":         "EB_VALIDATE",
	"jetstream.durable":        "eb_validate",
	"jetstream.deliver.policy": "new",
}

// CheckSink validates a plugin target's config with the sink plugin typ's validate endpoint and returns the keys
// the plugin marks secret. Errors: a validation error naming type (no such sink plugin) or the first key with a
// problem, listing every problem; domain.ErrUnavailable.
func (a *Adapter) CheckSink(ctx context.Context, typ target.Type, cfg map[string]string) ([]string, error) {
	const what = "check the target's plugin and config"
	classes, ok, err := a.plugin(ctx, rpc.TypeSink, string(typ))
	if err != nil {
		return nil, unavailable(err, what)
	}
	if !ok {
		return nil, domain.Invalid("type", "type %q is neither http, api-destination, bus, log nor a sink plugin of the "+
			"runtime; its sink plugins are: %s", typ, strings.Join(classes, ", "))
	}
	full := maps.Clone(validationSinkKeys)
	maps.Copy(full, cfg)
	full[rpc.ConfigConnectorClass] = string(typ)
	problems, first, err := a.validateConfig(ctx, string(typ), full)
	if err != nil {
		return nil, unavailable(err, what)
	}
	if len(problems) > 0 {
		field := "config"
		if first != "" {
			field += "." + first
		}
		return nil, domain.Invalid(field, "the config has %d problem(s): %s", len(problems), strings.Join(problems, "; "))
	}
	keys, err := a.secretKeys(ctx, string(typ))
	if err != nil {
		return nil, unavailable(err, what)
	}
	return keys, nil
}
