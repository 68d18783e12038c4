package archive

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMemberName(t *testing.T) {
	for in, want := range map[string]string{
		"a/b.txt": "a/b.txt", "/abs/x": "abs/x", "../../x": "x", "./a/../b": "b",
		"a//b/": "a/b", ".": "", "/": "", "..": "",
	} {
		if got := MemberName(filepath.FromSlash(in)); got != want {
			t.Errorf("MemberName(%q) = %q, want %q", in, got, want)
		}
	}
}

// sourceTree makes DIR/{a.txt, sub/, sub/b.txt, link -> a.txt} with fixed
// times and modes, and returns DIR. link is missing where symbolic links
// cannot be made.
func sourceTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o640)
	os.WriteFile(filepath.Join(dir, "sub", "b.txt"), content(2, 70000), 0o600)
	os.Symlink("a.txt", filepath.Join(dir, "link"))
	for _, p := range []string{"a.txt", "sub/b.txt", "sub", "."} {
		os.Chtimes(filepath.Join(dir, p), testTime, testTime)
	}
	return dir
}

func sourceNames(srcs []Source) []string {
	var out []string
	for _, s := range srcs {
		out = append(out, s.Name)
	}
	return out
}

// A directory is named from its path as given (cleaned, without a
// leading '/'), walked in lexical order, with symbolic links as they are
// (Lstat) rather than followed; "." names its contents from there, and
// rename names a single path.
func TestSources(t *testing.T) {
	dir := sourceTree(t)
	_, linkErr := os.Lstat(filepath.Join(dir, "link"))
	base := MemberName(dir)
	srcs, err := Sources([]string{dir}, "", true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{base, base + "/a.txt", base + "/link", base + "/sub", base + "/sub/b.txt"}
	if linkErr != nil {
		want = append(want[:2], want[3:]...)
	}
	if got := sourceNames(srcs); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("names %v, want %v", got, want)
	}
	for _, s := range srcs {
		if strings.HasSuffix(s.Name, "/link") && s.Info.Mode().Type() != fs.ModeSymlink {
			t.Fatalf("the link was followed: %v", s.Info.Mode())
		}
	}

	t.Chdir(dir)
	srcs, err = Sources([]string{"."}, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := sourceNames(srcs); got[0] != "a.txt" || got[len(got)-1] != "sub/b.txt" {
		t.Fatalf("contents of . named %v", got)
	}
	srcs, err = Sources([]string{"sub"}, "renamed/dir", true)
	if err != nil || strings.Join(sourceNames(srcs), " ") != "renamed/dir renamed/dir/b.txt" {
		t.Fatalf("renamed directory: %v %v", sourceNames(srcs), err)
	}
	srcs, err = Sources([]string{"a.txt", "-"}, "x.txt", false)
	if err != nil || len(srcs) != 2 || srcs[0].Name != "x.txt" || srcs[1].Path != "-" || srcs[1].Info != nil {
		t.Fatalf("renamed file and stdin: %+v %v", srcs, err)
	}
}

func TestSourcesRefuses(t *testing.T) {
	dir := sourceTree(t)
	for _, c := range []struct {
		paths  []string
		rename string
		want   error
	}{
		{[]string{dir}, "", ErrIsDir},
		{[]string{"-"}, "", ErrNeedsName},
		{[]string{filepath.Join(dir, "a.txt")}, "../x", ErrInvalidName},
		{[]string{filepath.Join(dir, "a.txt")}, "a/./b", ErrInvalidName},
		{[]string{filepath.Join(dir, "missing")}, "", fs.ErrNotExist},
	} {
		_, err := Sources(c.paths, c.rename, false)
		if !errors.Is(err, c.want) {
			t.Errorf("Sources(%q, %q): %v, want %v", c.paths, c.rename, err, c.want)
		}
		var se *SourceError
		if errors.As(err, &se) && se.Path != c.paths[0] {
			t.Errorf("SourceError names %q, want %q", se.Path, c.paths[0])
		}
	}
}

// AddSources keeps contents, modes and modification times, adds
// directories as directory members, reads "-" from Stdin, and skips a
// symbolic link, saying so.
func TestAddSources(t *testing.T) {
	dir := sourceTree(t)
	srcs, err := Sources([]string{dir}, "", true)
	if err != nil {
		t.Fatal(err)
	}
	more, _ := Sources([]string{"-"}, "stdin.txt", false)
	srcs = append(srcs, more...)
	a, path := newTestArchive(t, nil)
	var skipped []string
	o := &AddSourcesOptions{Stdin: strings.NewReader("from stdin"), Skipped: func(s Source, kind string) { skipped = append(skipped, s.Name+": "+kind) }}
	if err := a.AddSources(t.Context(), srcs, o); err != nil {
		t.Fatal(err)
	}
	a = reopen(t, a, path, true)
	defer a.Close()
	base := MemberName(dir)
	if a.Len() != 5 {
		t.Fatalf("%d members, want 3 files and 2 directories", a.Len())
	}
	for name, want := range map[string][]byte{base + "/a.txt": []byte("alpha\n"), base + "/sub/b.txt": content(2, 70000), "stdin.txt": []byte("from stdin")} {
		if got, err := a.ReadFile(name); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil && strings.Join(skipped, ",") != base+"/link: symbolic link" {
		t.Fatalf("skipped %q", skipped)
	}
	for name, mode := range map[string]fs.FileMode{base + "/a.txt": 0o640, base + "/sub/b.txt": 0o600, base + "/sub": fs.ModeDir | 0o755} {
		e, err := a.Stat(name)
		if mode, mtime := onHost(mode, testTime); err != nil || e.Mode != mode || !e.ModTime.Equal(mtime) {
			t.Errorf("%s: %v %v %v", name, e.Mode, e.ModTime, err)
		}
	}
}

// A failure or an interrupt rolls the whole batch back, saying where it
// stopped.
func TestAddSourcesStops(t *testing.T) {
	dir := sourceTree(t)
	srcs, _ := Sources([]string{filepath.Join(dir, "a.txt"), filepath.Join(dir, "sub")}, "", true)
	a, path := newTestArchive(t, nil)
	defer a.Close()
	mustAdd(t, a, srcs[1].Name, []byte("already there"))
	mustCommit(t, a)

	err := a.AddSources(t.Context(), srcs, nil)
	var ae *AddSourcesError
	if !errors.As(err, &ae) || !errors.Is(err, ErrExists) || ae.Done != 1 || ae.Source == nil || ae.Source.Name != srcs[1].Name {
		t.Fatalf("adding an existing member: %v (%+v)", err, ae)
	}
	if a.Pending() != 0 || a.Len() != 1 {
		t.Fatalf("after the failure: %d pending, %d members", a.Pending(), a.Len())
	}
	if err := a.AddSources(t.Context(), srcs, &AddSourcesOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	more, _ := Sources([]string{"-"}, "late.txt", false)
	err = a.AddSources(ctx, more, &AddSourcesOptions{Stdin: bytes.NewReader(nil)})
	if !errors.As(err, &ae) || !errors.Is(err, context.Canceled) || ae.Source != nil || ae.Done != 0 {
		t.Fatalf("cancelled: %v (%+v)", err, ae)
	}
	b := reopen(t, nil, path, true)
	defer b.Close()
	if _, err := b.Stat("late.txt"); !errors.Is(err, ErrNotExist) {
		t.Fatalf("late.txt after a cancelled add: %v", err)
	}
	if e, _ := b.Stat(srcs[1].Name); !e.IsDir() || time.Since(e.ModTime) < time.Hour {
		t.Fatalf("the replaced member: %+v", e)
	}
}
