package worker

import "runtime/debug"

// BuildVersion is the version of the running binary, for --version of both binaries (the control plane embeds
// the worker): release when the build set one (-ldflags "-X main.version=..."), else the module version Go recorded,
// then the VCS revision and the Go version when the build recorded them.
func BuildVersion(release string) string {
	v := release
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if v == "" {
			v = "(unknown)"
		}
		return v
	}
	if v == "" {
		v = info.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+modified"
			}
		}
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return v + " " + info.GoVersion
}
