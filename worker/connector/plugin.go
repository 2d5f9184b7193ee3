// Package connector is the plugin SPI of the worker runtime: a plugin is a name, a type, a config Spec and a
// constructor; the record is the CloudEvent. Transforms are plugins too (TransformPlugin): they change records on
// their way to a sink. Built-in plugins live in worker/plugins/<tech> and register themselves in init with
// Register and RegisterTransform, the only global of the runtime; a worker reads a Registry (by default a clone of
// the global one, see Default), so tests can build their own.
package connector

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/eventbridge-go/eventbridge/rpc"
)

// Type says what a plugin does.
type Type string

// Plugin types.
const (
	TypeSink   Type = rpc.TypeSink
	TypeSource Type = rpc.TypeSource
)

// NewSinkFunc builds one sink for one task. It must not do I/O (Connect does) and must be cheap enough to be
// called to validate a config. cfg reads the connector config through the plugin's Spec merged with SinkSpec.
// Problems of the config that the Spec cannot express are returned as FieldErrors.
type NewSinkFunc func(cfg Values, env Env) (Sink, error)

// Plugin is a connector plugin.
type Plugin struct {
	// Name is the value of connector.class that selects the plugin.
	Name    string
	Type    Type
	Version string
	Doc     string
	// Spec holds the plugin's own keys; the runtime adds the common keys of its type (SinkSpec).
	Spec Spec
	// NewSink builds a sink; set for TypeSink.
	NewSink NewSinkFunc
	// NewSource builds a source; set for TypeSource.
	NewSource NewSourceFunc
}

func (p Plugin) validate() error {
	switch {
	case p.Name == "":
		return errors.New("connector: plugin without a name")
	case p.Type == TypeSink && p.NewSink == nil:
		return fmt.Errorf("connector: sink plugin %q without NewSink", p.Name)
	case p.Type == TypeSource && p.NewSource == nil:
		return fmt.Errorf("connector: source plugin %q without NewSource", p.Name)
	case p.Type != TypeSink && p.Type != TypeSource:
		return fmt.Errorf("connector: plugin %q has unknown type %q", p.Name, p.Type)
	}
	return nil
}

// FullSpec is the plugin's spec with the common keys of its type.
func (p Plugin) FullSpec() Spec {
	if p.Type == TypeSink {
		return SinkSpec().Merge(p.Spec)
	}
	return SourceSpec().Merge(p.Spec)
}

// Probe builds one sink or source of the plugin with cfg and closes it: constructors find what a spec cannot
// say. It returns the sink's write timeout (DefaultWriteTimeout for sources and sinks that do not say).
func (p Plugin) Probe(cfg Values, env Env) (time.Duration, error) {
	if p.Type == TypeSource {
		s, err := p.NewSource(cfg, env)
		if err != nil {
			return 0, err
		}
		_ = s.Close()
		return DefaultWriteTimeout, nil
	}
	s, err := p.NewSink(cfg, env)
	if err != nil {
		return 0, err
	}
	timeout := DefaultWriteTimeout
	if wt, ok := s.(WriteTimeouter); ok {
		timeout = wt.WriteTimeout()
	}
	_ = s.Close()
	return timeout, nil
}

// Registry holds connector plugins and transform plugins, each by name. Safe for concurrent use.
type Registry struct {
	mu         sync.RWMutex
	plugins    map[string]Plugin
	transforms map[string]TransformPlugin
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{plugins: map[string]Plugin{}, transforms: map[string]TransformPlugin{}}
}

// Register adds p; it fails when p is incomplete or its name is taken.
func (r *Registry) Register(p Plugin) error {
	if err := p.validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.plugins[p.Name]; ok {
		return fmt.Errorf("connector: plugin %q registered twice", p.Name)
	}
	r.plugins[p.Name] = p
	return nil
}

// Lookup returns the plugin named name.
func (r *Registry) Lookup(name string) (Plugin, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	p, ok := r.plugins[name]
	return p, ok
}

// Plugins returns every plugin, sorted by name.
func (r *Registry) Plugins() []Plugin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := slices.Collect(maps.Values(r.plugins))
	slices.SortFunc(out, func(a, b Plugin) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Clone returns an independent copy of r.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return &Registry{plugins: maps.Clone(r.plugins), transforms: maps.Clone(r.transforms)}
}

// Validate looks up the plugin named by connector.class and checks cfg against its full spec and its transforms
// (see Transforms), then builds one sink or source with it (constructors find what a spec cannot say, such as a pattern that
// does not compile) and closes it. It returns every problem, each naming its key; an unknown plugin is a problem
// of connector.class.
func (r *Registry) Validate(cfg map[string]string, env Env) (Plugin, FieldErrors) {
	class := cfg[KeyClass]
	if class == "" {
		return Plugin{}, FieldErrors{{Key: KeyClass, Message: "is required"}}
	}
	p, ok := r.Lookup(class)
	if !ok {
		names := []string{}
		for _, q := range r.Plugins() {
			names = append(names, q.Name)
		}
		return Plugin{}, FieldErrors{{Key: KeyClass, Message: fmt.Sprintf("unknown plugin %q (known: %v)", class, names)}}
	}
	spec := p.FullSpec()
	errs := spec.Validate(cfg)
	if _, terrs := r.Transforms(cfg, env); len(terrs) > 0 {
		errs = append(errs, terrs...)
	}
	if len(errs) > 0 {
		return p, errs
	}
	if _, err := p.Probe(spec.Values(cfg), env); err != nil {
		var fe FieldErrors
		if errors.As(err, &fe) {
			return p, fe
		}
		return p, FieldErrors{{Key: KeyClass, Message: err.Error()}}
	}
	return p, nil
}

// global is the registry plugins add themselves to in init; the only package-level state of the runtime.
var global = NewRegistry()

// Register adds p to the global registry. Call it from the init function of the plugin's package; it panics when
// p is incomplete or its name is taken, which is a programming error.
func Register(p Plugin) {
	if err := global.Register(p); err != nil {
		panic(err)
	}
}

// Lookup returns the plugin of the global registry named name.
func Lookup(name string) (Plugin, bool) { return global.Lookup(name) }

// Plugins returns the plugins of the global registry, sorted by name.
func Plugins() []Plugin { return global.Plugins() }

// Default returns a clone of the global registry: the plugins of every linked worker/plugins package.
func Default() *Registry { return global.Clone() }
