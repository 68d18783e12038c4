package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time by the release build (-X main.version=...).
var version = "dev"

func init() {
	register(&command{
		name:    "version",
		summary: "print the version, commit, Go version and accelerated code paths",
		usage: `Usage: cryptvol version

Example:
  cryptvol version
`,
		run: runVersion,
	})
}

func runVersion(ctx context.Context, a *app, args []string) error {
	c := commands["version"]
	fs := newFlags(c, a)
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	commit, dirty := "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(a.stdout, "cryptvol %s\ncommit %s%s\n%s %s/%s\n", version, commit, dirty, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, l := range accelerationReport() {
		fmt.Fprintln(a.stdout, l)
	}
	return nil
}
