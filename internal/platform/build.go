package platform

import (
	"runtime/debug"
)

// Build is what this binary was built from.
type Build struct {
	// Revision is the commit, "unknown" when there is none, with
	// " (modified)" after it when the tree had uncommitted changes.
	Revision string
	// Settings are the build settings that choose code paths, as
	// KEY=VALUE (GOARM=6, GOAMD64=v3, CGO_ENABLED=0, -tags=...).
	Settings []string
}

// ReadBuild reads the build info of the running binary. commit and
// modified ("true" for uncommitted changes) are the values the release
// build links in; when commit is "", the VCS stamp of the build info is
// used instead.
func ReadBuild(commit, modified string) Build {
	rev, dirty := commit, modified == "true"
	var b Build
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if commit == "" {
					rev = s.Value
				}
			case "vcs.modified":
				if commit == "" {
					dirty = s.Value == "true"
				}
			case "GOARM", "GOAMD64", "GOARM64", "GOMIPS64", "GORISCV64", "CGO_ENABLED", "-tags":
				b.Settings = append(b.Settings, s.Key+"="+s.Value)
			}
		}
	}
	if rev == "" {
		rev = "unknown"
	}
	if dirty {
		rev += " (modified)"
	}
	b.Revision = rev
	return b
}
