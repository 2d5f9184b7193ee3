package main

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v2"
)

// TestComposeFile parses docker-compose.yml (no Docker engine here) and checks that the worker's command line in
// it is one this binary accepts.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var f struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(b, &f))
	cmd := f.Services["worker"].Command
	require.NotEmpty(t, cmd)
	require.True(t, strings.HasSuffix(cmd[0], "/worker"))
	m := NewMain()
	m.Stderr = io.Discard
	m.Getenv = func(string) string { return "" }
	require.NoError(t, m.ParseFlags(cmd[1:]))
	require.Contains(t, m.NATSURL, "nats-1")
	require.Equal(t, "0.0.0.0:8083", m.RESTAddr)
}
