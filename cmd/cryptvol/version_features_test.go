//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVersionCPUFeaturesNameWhatThePathsUse: `cryptvol version` lists
// SHA-NI among the CPU features exactly when its PBKDF2-SHA-256 path uses
// the SHA instructions (issue 29, item 10: the feature list left SHA-NI
// out while the next lines said PBKDF2-SHA-256 used it), here and with
// the SHA extensions masked (GODEBUG=cpu.sha=off) or every feature masked.
func TestVersionCPUFeaturesNameWhatThePathsUse(t *testing.T) {
	needCLI(t)
	dir := t.TempDir()
	for _, godebug := range []string{"", "cpu.sha=off", "cpu.all=off"} {
		env := append(cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp")), "GODEBUG="+godebug)
		r := cvRun(env, time.Minute, "version")
		if r.code != 0 {
			t.Fatalf("GODEBUG=%s cryptvol version: %v", godebug, r)
		}
		var features, sha256Path string
		for _, l := range strings.Split(r.out, "\n") {
			if f, ok := strings.CutPrefix(l, "cpu features: "); ok {
				features = f
			}
			if p, ok := strings.CutPrefix(strings.TrimSpace(l), "PBKDF2-SHA-256"); ok {
				sha256Path = p
			}
		}
		if sha256Path == "" {
			t.Fatalf("GODEBUG=%s: version names no PBKDF2-SHA-256 path:\n%s", godebug, r.out)
		}
		listed := strings.Contains(" "+features+" ", " SHA-NI ")
		used := strings.Contains(sha256Path, "SHA-NI")
		if listed != used {
			t.Errorf("GODEBUG=%s: cpu features %q, PBKDF2-SHA-256 path %q: SHA-NI listed %v, used %v", godebug, features, strings.TrimSpace(sha256Path), listed, used)
		}
	}
}
