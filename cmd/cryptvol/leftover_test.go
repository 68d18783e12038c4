package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// findPlaintext returns the files below dir, other than except, that hold
// secret (or its first 64 KiB, for a file cut off part-way), or whose name
// is that of a temporary file (ours, or an older cryptvol's).
func findPlaintext(t interface{ Fatal(...any) }, dir string, secret []byte, except string) []string {
	probe := secret
	if len(probe) > 64<<10 {
		probe = probe[:64<<10]
	}
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || p == except {
			return nil
		}
		n := d.Name()
		if strings.Contains(n, ".cryptvol-") || strings.Contains(n, ".compact-") || strings.HasSuffix(n, ".tmp") {
			found = append(found, p)
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(probe) > 0 && bytes.Contains(b, probe) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
