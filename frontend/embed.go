// Package frontend holds the browser console (React + TypeScript + Vite, sources in this directory) and embeds its
// build, dist/, into the binaries that import it. dist/ is made by `npm run build` (`make build` runs it when the
// sources changed) and is never committed.
//
// The package compiles on a clean clone, where dist/ does not exist, and while a build has emptied dist/: the embed
// pattern dist*/* matches what is in dist/ and in the committed dist-placeholder/, and a pattern fails only when
// it matches nothing (or an empty folder; dist/ itself is never matched, only what it holds). "all:" keeps files
// whose names begin with "_" or "." (bundlers name chunks like _commonjsHelpers-3f2a.js), which a plain pattern
// would drop.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist*/*
var files embed.FS

// Dist returns the built console: the contents of dist/, with index.html at its root. Without a build (see Built)
// it is an empty file system.
func Dist() fs.FS {
	sub, err := fs.Sub(files, "dist")
	if err != nil { // fs.Sub fails only on an invalid name, and "dist" is valid
		panic(err)
	}
	return sub
}

// Built reports whether the console was built before the binary: whether dist/index.html was embedded.
func Built() bool {
	_, err := fs.Stat(files, "dist/index.html")
	return err == nil
}
