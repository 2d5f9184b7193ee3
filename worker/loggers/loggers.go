// Package loggers holds a process's named loggers and their levels, which Kafka Connect's /admin/loggers (KIP-495,
// KIP-976) reads and changes at run time: log4j's level names (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF), "root"
// for the level of every logger without one of its own, and a level set on a name applying to every logger whose
// name starts with it. Names are dotted: "eventbridge.worker.herder", "eventbridge.plugin.http".
package loggers

import (
	"context"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Root names the root logger, as Kafka Connect does.
const Root = "root"

// Levels beyond slog's own: TRACE below DEBUG, FATAL above ERROR, OFF above everything.
const (
	LevelTrace = slog.LevelDebug - 4
	LevelFatal = slog.LevelError + 4
	LevelOff   = slog.Level(math.MaxInt32)
)

var levelNames = []struct {
	name  string
	level slog.Level
}{
	{"TRACE", LevelTrace}, {"DEBUG", slog.LevelDebug}, {"INFO", slog.LevelInfo}, {"WARN", slog.LevelWarn},
	{"ERROR", slog.LevelError}, {"FATAL", LevelFatal}, {"OFF", LevelOff},
}

// ParseLevel reads a log4j level name, in any case.
func ParseLevel(s string) (slog.Level, bool) {
	for _, l := range levelNames {
		if strings.EqualFold(s, l.name) {
			return l.level, true
		}
	}
	return 0, false
}

// LevelName is the log4j name of a level (the nearest at or below it).
func LevelName(level slog.Level) string {
	name := levelNames[0].name
	for _, l := range levelNames {
		if level >= l.level {
			name = l.name
		}
	}
	return name
}

// Info is a logger's level as /admin/loggers answers it; LastModified is when it was set through the API, in
// milliseconds since the epoch (null when it never was).
type Info struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

type entry struct {
	level    slog.Level
	modified time.Time
}

// Levels is the set of named loggers of a process writing to one handler. The zero value is not usable: use New.
type Levels struct {
	inner slog.Handler
	now   func() time.Time

	mu    sync.RWMutex
	root  entry
	set   map[string]entry // levels of their own
	known map[string]bool  // names of the loggers made
}

// LowestEnabled is the lowest level log writes, to give New the level of a logger made elsewhere.
func LowestEnabled(log *slog.Logger) slog.Level {
	for _, l := range levelNames {
		if log.Enabled(context.Background(), l.level) {
			return l.level
		}
	}
	return LevelOff
}

// New returns the loggers writing to inner, which must let every level through (they decide), with root's level.
func New(inner slog.Handler, root slog.Level) *Levels {
	return &Levels{inner: inner, now: time.Now, root: entry{level: root}, set: map[string]entry{}, known: map[string]bool{}}
}

// Logger returns the logger of name; "root" (or "") is the root logger.
func (l *Levels) Logger(name string) *slog.Logger {
	if name == "" {
		name = Root
	}
	if name != Root {
		l.mu.Lock()
		l.known[name] = true
		l.mu.Unlock()
	}
	return slog.New(&handler{inner: l.inner, levels: l, name: name})
}

// effective is the level of name: its own, else that of its nearest dotted ancestor with one, else root's.
func (l *Levels) effective(name string) entry {
	for n := name; n != ""; {
		if e, ok := l.set[n]; ok {
			return e
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return l.root
}

func (l *Levels) enabled(name string, level slog.Level) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if name == Root {
		return level >= l.root.level
	}
	return level >= l.effective(name).level
}

func info(e entry) Info {
	out := Info{Level: LevelName(e.level)}
	if !e.modified.IsZero() {
		ms := e.modified.UnixMilli()
		out.LastModified = &ms
	}
	return out
}

// List returns root and every logger made or given a level, with its effective level.
func (l *Levels) List() map[string]Info {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]Info{Root: info(l.root)}
	for name := range l.known {
		out[name] = info(l.effective(name))
	}
	for name, e := range l.set {
		out[name] = info(e)
	}
	return out
}

// Get returns the effective level of a logger; false when no logger has that name.
func (l *Levels) Get(name string) (Info, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if strings.EqualFold(name, Root) {
		return info(l.root), true
	}
	_, own := l.set[name]
	if !l.known[name] && !own {
		return Info{}, false
	}
	return info(l.effective(name)), true
}

// Set gives level to name and to every logger whose name starts with it ("root": to root and every logger), and
// returns the names changed, sorted.
func (l *Levels) Set(name string, level slog.Level) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := entry{level: level, modified: l.now()}
	changed := map[string]bool{}
	if strings.EqualFold(name, Root) {
		l.root = e
		changed[Root] = true
		for n := range l.known {
			changed[n] = true
		}
		for n := range l.set {
			l.set[n] = e
			changed[n] = true
		}
		return slices.Sorted(maps.Keys(changed))
	}
	l.set[name] = e
	changed[name] = true
	for n := range l.known {
		if strings.HasPrefix(n, name) {
			l.set[n] = e
			changed[n] = true
		}
	}
	return slices.Sorted(maps.Keys(changed))
}

// handler asks its Levels whether a record of its logger is written.
type handler struct {
	inner  slog.Handler
	levels *Levels
	name   string
}

func (h *handler) Enabled(_ context.Context, level slog.Level) bool {
	return h.levels.enabled(h.name, level)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error { return h.inner.Handle(ctx, r) }

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &handler{inner: h.inner.WithAttrs(attrs), levels: h.levels, name: h.name}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{inner: h.inner.WithGroup(name), levels: h.levels, name: h.name}
}
