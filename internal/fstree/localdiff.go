package fstree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// DiffDirs compares two local trees (a source, and what a `get -r` wrote)
// and returns their differences, one a line, or "": names, types, sizes,
// sha256, symbolic link targets, and file modification times truncated to
// res. Paths in ignore (slash-separated, relative) are left out of got.
func DiffDirs(want, got string, res time.Duration, ignore []string) string {
	var diffs []string
	add := func(f string, a ...any) { diffs = append(diffs, fmt.Sprintf(f, a...)) }
	seen := map[string]bool{}
	filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			add("%v", err)
			return nil
		}
		rel, _ := filepath.Rel(want, p)
		if rel == "." {
			return nil
		}
		seen[filepath.ToSlash(rel)] = true
		q := filepath.Join(got, rel)
		wi, _ := os.Lstat(p)
		gi, err := os.Lstat(q)
		if err != nil {
			add("%s: missing", rel)
			return nil
		}
		if wi.Mode().Type() != gi.Mode().Type() {
			add("%s: type %v, want %v", rel, gi.Mode().Type(), wi.Mode().Type())
			return nil
		}
		switch {
		case wi.Mode()&fs.ModeSymlink != 0:
			wt, _ := os.Readlink(p)
			gt, _ := os.Readlink(q)
			if wt != gt {
				add("%s: link to %q, want %q", rel, gt, wt)
			}
		case wi.Mode().IsRegular():
			if wi.Size() != gi.Size() {
				add("%s: size %d, want %d", rel, gi.Size(), wi.Size())
			}
			wh, _ := hashFile(p)
			gh, _ := hashFile(q)
			if wh != gh {
				add("%s: sha256 differs", rel)
			}
			wt := wi.ModTime().Truncate(res) // from year 1: also whole Unix seconds
			if !gi.ModTime().Equal(wt) {
				add("%s: mtime %v, want %v", rel, gi.ModTime().UTC(), wt.UTC())
			}
		}
		return nil
	})
	filepath.WalkDir(got, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(got, p)
		rel = filepath.ToSlash(rel)
		if err == nil && rel != "." && !seen[rel] && !ignored(rel, ignore) {
			add("%s: not in the source", rel)
		}
		if err == nil && d.IsDir() && ignored(rel, ignore) {
			return filepath.SkipDir
		}
		return nil
	})
	return strings.Join(diffs, "\n")
}
