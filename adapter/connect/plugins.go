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

// configProblem is one problem the plugin found in a config: of key, or of the config as a whole (key "").
type configProblem struct{ key, message string }

// validateConfig asks the runtime to validate cfg with the plugin class and returns every problem it found (none:
// valid); an error only when the runtime could not answer.
func (a *Adapter) validateConfig(ctx context.Context, class string, cfg map[string]string) ([]configProblem, error) {
	infos, err := a.cfg.Runtime.ValidateConfig(ctx, class, cfg)
	if err != nil {
		if rpc.IsBadRequest(err) {
			return []configProblem{{message: err.Error()}}, nil
		}
		return nil, err
	}
	var ps []configProblem
	for _, ci := range infos.Configs {
		for _, msg := range ci.Value.Errors {
			ps = append(ps, configProblem{key: ci.Definition.Name, message: msg})
		}
	}
	if infos.ErrorCount > 0 && len(ps) == 0 {
		ps = []configProblem{{message: fmt.Sprintf("the plugin %s found %d problem(s)", class, infos.ErrorCount)}}
	}
	return ps, nil
}

// configError is the error of a config's problems: a copy of base naming the first key with a problem
// (config.<key>), every problem in its message ("config.<key>: <message>", separated by "; ") and one by one in
// its Details, at /config/<key> of the resource (a document places them under the resource's own pointer).
func configError(base *domain.Error, ps []configProblem) *domain.Error {
	field, texts := "config", make([]string, 0, len(ps))
	var details []domain.Detail
	for _, p := range ps {
		at, pointer := "config", "/config"
		if p.key != "" {
			at, pointer = "config."+p.key, "/config/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(p.key)
			if field == "config" {
				field = at
			}
		}
		texts = append(texts, at+": "+p.message)
		details = append(details, domain.Detail{Pointer: pointer, Code: base.Code, Message: at + ": " + p.message})
	}
	e := base.With("the config has %d problem(s): %s", len(ps), strings.Join(texts, "; ")).WithField(field)
	e.Details = details
	return e
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
	problems, err := a.validateConfig(ctx, string(typ), full)
	if err != nil {
		return nil, unavailable(err, what)
	}
	if len(problems) > 0 {
		return nil, configError(domain.ErrValidation, problems)
	}
	keys, err := a.secretKeys(ctx, string(typ))
	if err != nil {
		return nil, unavailable(err, what)
	}
	return keys, nil
}
