package frontend_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/eventbridge-go/eventbridge/frontend"
)

// TestEmbed: the package embeds exactly the build on disk, when there is one: every file of dist/, including
// those whose names begin with "_" or ".", byte for byte; without dist/index.html, Built reports false and Dist
// serves no page.
func TestEmbed(t *testing.T) {
	_, err := os.Stat(filepath.Join("dist", "index.html"))
	onDisk := err == nil
	if !onDisk {
		require.Truef(t, errors.Is(err, fs.ErrNotExist), "stat dist/index.html: %v", err)
	}
	require.Equal(t, onDisk, frontend.Built(), "Built reports whether dist/index.html was embedded")

	dist := frontend.Dist()
	if !onDisk {
		_, err := fs.Stat(dist, "index.html")
		assert.ErrorIs(t, err, fs.ErrNotExist)
		return
	}
	// The test binary embeds dist/ as it was when the test was compiled, which is now: go test rebuilds the
	// package when an embedded file changes.
	files := 0
	require.NoError(t, filepath.WalkDir("dist", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel("dist", p)
		if err != nil {
			return err
		}
		want, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		got, err := fs.ReadFile(dist, filepath.ToSlash(rel))
		if assert.NoErrorf(t, err, "dist/%s is embedded", rel) {
			assert.Truef(t, bytes.Equal(want, got), "dist/%s is embedded as it is", rel)
		}
		files++
		return nil
	}))
	assert.Positive(t, files)
}
