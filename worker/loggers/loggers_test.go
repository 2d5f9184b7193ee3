package loggers_test

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/worker/loggers"
)

// TestLevels: a logger writes at root's level until it or a dotted ancestor gets one of its own; setting a name
// sets every logger whose name starts with it, as Kafka Connect's /admin/loggers does; "root" sets them all.
func TestLevels(t *testing.T) {
	var out bytes.Buffer
	l := loggers.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: loggers.LevelTrace}), slog.LevelInfo)
	herder, http, kafka := l.Logger("eventbridge.worker.herder"), l.Logger("eventbridge.plugin.http"), l.Logger("eventbridge.plugin.kafka")
	root := l.Logger(loggers.Root)

	herder.Debug("hidden")
	root.Info("shown")
	assert.NotContains(t, out.String(), "hidden")
	assert.Contains(t, out.String(), "shown")

	changed := l.Set("eventbridge.plugin", slog.LevelDebug)
	assert.Equal(t, []string{"eventbridge.plugin", "eventbridge.plugin.http", "eventbridge.plugin.kafka"}, changed)
	http.Debug("http debug")
	kafka.Log(t.Context(), loggers.LevelTrace, "kafka trace")
	herder.Debug("herder debug")
	assert.Contains(t, out.String(), "http debug")
	assert.NotContains(t, out.String(), "kafka trace")
	assert.NotContains(t, out.String(), "herder debug")

	got, ok := l.Get("eventbridge.plugin.http")
	require.True(t, ok)
	assert.Equal(t, "DEBUG", got.Level)
	require.NotNil(t, got.LastModified)
	assert.InDelta(t, time.Now().UnixMilli(), *got.LastModified, 60_000)
	got, ok = l.Get("eventbridge.worker.herder")
	require.True(t, ok)
	assert.Equal(t, loggers.Info{Level: "INFO"}, got, "root's level, never set")
	_, ok = l.Get("nope")
	assert.False(t, ok)

	// A logger made later under a name with a level has that level.
	l.Logger("eventbridge.plugin.mqtt").Debug("mqtt debug")
	assert.Contains(t, out.String(), "mqtt debug")

	// root: every logger.
	changed = l.Set("ROOT", loggers.LevelOff)
	assert.Contains(t, changed, "root")
	assert.Contains(t, changed, "eventbridge.worker.herder")
	root.Error("off")
	http.Error("off too")
	assert.NotContains(t, out.String(), "off")
	list := l.List()
	assert.Equal(t, "OFF", list["root"].Level)
	assert.Equal(t, "OFF", list["eventbridge.plugin.http"].Level)

	for name, want := range map[string]slog.Level{"trace": loggers.LevelTrace, "Debug": slog.LevelDebug, "INFO": slog.LevelInfo,
		"warn": slog.LevelWarn, "error": slog.LevelError, "fatal": loggers.LevelFatal, "off": loggers.LevelOff} {
		got, ok := loggers.ParseLevel(name)
		assert.True(t, ok, name)
		assert.Equal(t, want, got, name)
	}
	_, ok = loggers.ParseLevel("loud")
	assert.False(t, ok)
	assert.Equal(t, slog.LevelWarn, loggers.LowestEnabled(slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelWarn}))))
}
