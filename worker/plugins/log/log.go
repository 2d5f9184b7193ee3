// Package log is the log sink plugin: it writes each event as one structured log line (log/slog) on the logger of
// its connector and task, at a configured level, optionally with its data truncated to a configured size. It is
// meant for debugging rules and targets: it never fails, so every record is acked once logged.
//
//	connector.class=log
//	level=info
//	include.data=true
//	data.max.bytes=256
package log

import (
	"context"
	"encoding/base64"
	"log/slog"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/eventbridge-go/eventbridge/worker/connector"
)

// Name is the plugin's connector.class.
const Name = "log"

// Config keys.
const (
	KeyLevel        = "level"          // debug | info | warn | error
	KeyIncludeData  = "include.data"   // log the data too
	KeyDataMaxBytes = "data.max.bytes" // data beyond this many bytes is cut
)

// Levels, the values of KeyLevel.
const (
	LevelDebug = "debug"
	LevelInfo  = "info"
	LevelWarn  = "warn"
	LevelError = "error"
)

// Message is the message of every line the sink writes.
const Message = "event"

func init() { connector.Register(Plugin()) }

// Plugin returns the log sink plugin.
func Plugin() connector.Plugin {
	return connector.Plugin{
		Name:    Name,
		Type:    connector.TypeSink,
		Version: "1.0.0",
		Doc:     "Writes each event as one structured log line of the worker; never fails. For debugging rules and targets.",
		Spec: connector.Spec{
			{Name: KeyLevel, Title: "Log level", Type: connector.TypeEnum, Default: LevelInfo,
				Enum: []string{LevelDebug, LevelInfo, LevelWarn, LevelError},
				Doc:  "Level of the log lines; lines below the worker's log level are not written."},
			{Name: KeyIncludeData, Title: "Include data", Type: connector.TypeBool, Default: "false",
				Doc: "Whether the line carries the event's data (it may hold personal or secret values): text as it is, other bytes in base64."},
			{Name: KeyDataMaxBytes, Title: "Maximum data size (bytes)", Type: connector.TypeInt, Default: "1024", Min: connector.Min(0),
				Doc: "With include.data, data longer than this many bytes is cut to it (data.truncated=true, data.size the full size)."},
		},
		NewSink: New,
	}
}

// Sink logs records. Safe for concurrent Write.
type Sink struct {
	log         *slog.Logger
	level       slog.Level
	includeData bool
	maxData     int
}

var _ connector.Sink = (*Sink)(nil)

// New reads the config; it cannot fail on a config the Spec accepted.
func New(cfg connector.Values, env connector.Env) (connector.Sink, error) {
	var level slog.Level
	switch cfg.String(KeyLevel) {
	case LevelDebug:
		level = slog.LevelDebug
	case LevelWarn:
		level = slog.LevelWarn
	case LevelError:
		level = slog.LevelError
	default:
		level = slog.LevelInfo
	}
	return &Sink{log: env.Log(), level: level, includeData: cfg.Bool(KeyIncludeData), maxData: int(cfg.Int(KeyDataMaxBytes))}, nil
}

// Connect does nothing.
func (s *Sink) Connect(context.Context) error { return nil }

// Close does nothing.
func (s *Sink) Close() error { return nil }

// Write logs e as one line: its attributes, its extensions in the group ext, where it was read (stream, seq,
// attempt) and, when include.data is set, its data (text as is, other bytes in base64) cut to data.max.bytes.
// It always returns nil.
func (s *Sink) Write(ctx context.Context, e *event.Event) error {
	if !s.log.Enabled(ctx, s.level) {
		return nil
	}
	attrs := make([]slog.Attr, 0, 16)
	attrs = append(attrs,
		slog.String("id", e.ID()),
		slog.String("source", e.Source()),
		slog.String("type", e.Type()),
		slog.String("specversion", e.SpecVersion()))
	if v := e.Subject(); v != "" {
		attrs = append(attrs, slog.String("subject", v))
	}
	if t := e.Time(); !t.IsZero() {
		attrs = append(attrs, slog.String("time", t.UTC().Format(time.RFC3339Nano)))
	}
	if v := e.DataContentType(); v != "" {
		attrs = append(attrs, slog.String("datacontenttype", v))
	}
	if v := e.DataSchema(); v != "" {
		attrs = append(attrs, slog.String("dataschema", v))
	}
	if exts := e.Extensions(); len(exts) > 0 {
		keys := make([]string, 0, len(exts))
		for k := range exts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		group := make([]any, 0, len(keys))
		for _, k := range keys {
			group = append(group, slog.Any(k, exts[k]))
		}
		attrs = append(attrs, slog.Group("ext", group...))
	}
	if m, ok := connector.MetaFrom(ctx); ok {
		attrs = append(attrs, slog.String("stream", m.Stream), slog.Uint64("seq", m.Sequence),
			slog.Uint64("attempt", m.Attempt))
	}
	if s.includeData {
		attrs = append(attrs, s.dataAttrs(e.Data())...)
	}
	s.log.LogAttrs(ctx, s.level, Message, attrs...)
	return nil
}

// dataAttrs returns data cut to maxData bytes (UTF-8 text on a rune boundary; other bytes in base64).
func (s *Sink) dataAttrs(data []byte) []slog.Attr {
	if len(data) == 0 {
		return nil
	}
	cut := data
	if len(cut) > s.maxData {
		cut = cut[:s.maxData]
	}
	var out []slog.Attr
	if utf8.Valid(data) {
		text := strings.ToValidUTF8(string(cut), "") // drops a rune split by the cut
		out = append(out, slog.String("data", text))
	} else {
		out = append(out, slog.String("data", base64.StdEncoding.EncodeToString(cut)), slog.String("data.encoding", "base64"))
	}
	if len(cut) < len(data) {
		out = append(out, slog.Bool("data.truncated", true), slog.Int("data.size", len(data)))
	}
	return out
}
