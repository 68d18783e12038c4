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
)

// treeArchive holds d/ (a directory member, 0750), d/x, d/sub/y, dz and
// top, each file's contents its name repeated.
func treeArchive(t *testing.T) (*Archive, string) {
	t.Helper()
	a, path := newTestArchive(t, nil)
	if err := a.Add("d", nil, Info{ModTime: testTime, Mode: fs.ModeDir | 0o750}, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"d/x", "d/sub/y", "dz", "top"} {
		mustAdd(t, a, n, bytes.Repeat([]byte(n), 1000))
	}
	mustCommit(t, a)
	return a, path
}

func entryNames(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Name)
	}
	return strings.Join(out, " ")
}

// A name selects its member and everything under it (not what merely
// starts with the same letters), each once, in the order added; a name
// that selects nothing fails the whole selection.
func TestSelect(t *testing.T) {
	a, _ := treeArchive(t)
	defer a.Close()
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, "d d/x d/sub/y dz top"},
		{[]string{"d"}, "d d/x d/sub/y"},
		{[]string{"/d/sub/", "d/x", "d/./x"}, "d/sub/y d/x"},
		{[]string{"top", "d/sub"}, "top d/sub/y"},
		{[]string{"/"}, "d d/x d/sub/y dz top"},
		{[]string{"dz/"}, "dz"},
	} {
		sel, err := a.Select(c.names)
		if err != nil || entryNames(sel) != c.want {
			t.Errorf("Select(%q) = %q, %v; want %q", c.names, entryNames(sel), err, c.want)
		}
	}
	for _, names := range [][]string{{"nope"}, {"top", "d/s"}, {"d/x/y"}} {
		if _, err := a.Select(names); !errors.Is(err, ErrNotExist) {
			t.Errorf("Select(%q): %v, want ErrNotExist", names, err)
		}
	}
	if _, err := a.Select([]string{"top", "missing/file"}); err == nil || err.Error() != "missing/file: file does not exist" {
		t.Errorf("the missing name: %v", err)
	}
	if n := SelectName("/a/./b/"); n != "a/b" {
		t.Errorf("SelectName: %q", n)
	}
}

// Everything comes out as it went in: contents, modes and times, of the
// directory member too (set last, so its contents could be written).
func TestExtractAll(t *testing.T) {
	a, _ := treeArchive(t)
	defer a.Close()
	dir := filepath.Join(t.TempDir(), "out", "new")
	sel, _ := a.Select(nil)
	rep, err := a.ExtractAll(t.Context(), dir, sel, nil)
	if err != nil || rep.Files != 4 || rep.Extracted != 4 || len(rep.Damaged) != 0 {
		t.Fatalf("%+v %v", rep, err)
	}
	for _, n := range []string{"d/x", "d/sub/y", "dz", "top"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil || !bytes.Equal(got, bytes.Repeat([]byte(n), 1000)) {
			t.Fatalf("%s: %d bytes, %v", n, len(got), err)
		}
		fi, _ := os.Stat(filepath.Join(dir, filepath.FromSlash(n)))
		if mode, mtime := onHost(0o640, testTime); fi.Mode().Perm() != mode || !fi.ModTime().Equal(mtime) {
			t.Fatalf("%s: %v %v", n, fi.Mode(), fi.ModTime())
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "d"))
	if mode, mtime := onHost(fs.ModeDir|0o750, testTime); err != nil || fi.Mode().Perm() != mode.Perm() || !fi.ModTime().Equal(mtime) {
		t.Fatalf("directory d: %v", fi.Mode())
	}

	// Again: the first existing file stops it before anything is written.
	os.Remove(filepath.Join(dir, "top"))
	_, err = a.ExtractAll(t.Context(), dir, sel, nil)
	var xe *ExtractError
	if !errors.As(err, &xe) || xe.Err != ErrExists || xe.Entry.Name != "d/x" || xe.Path != filepath.Join(dir, "d", "x") {
		t.Fatalf("over existing files: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "top")); err == nil {
		t.Fatal("top was written before the refusal")
	}
	if rep, err := a.ExtractAll(t.Context(), dir, sel, &ExtractOptions{Replace: true}); err != nil || rep.Extracted != 4 {
		t.Fatalf("with Replace: %+v %v", rep, err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := a.ExtractAll(ctx, t.TempDir(), sel, nil); !errors.As(err, &xe) || xe.Entry != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// Names that would leave the directory are refused before anything is
// written, and by Extract itself. An archive cannot hold such names
// (ValidName); these entries stand for one whose index says otherwise.
func TestExtractRefusesPathsOutsideTheRoot(t *testing.T) {
	a, _ := treeArchive(t)
	defer a.Close()
	top, _ := a.Stat("top")
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	for _, name := range []string{"../top", "d/../../top", "/top"} {
		evil := top
		evil.Name = name
		_, err := a.ExtractAll(t.Context(), dir, []Entry{top, evil}, nil)
		var xe *ExtractError
		if !errors.As(err, &xe) || xe.Err != ErrInvalidName || xe.Entry.Name != name {
			t.Errorf("ExtractAll of %q: %v", name, err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatalf("%q: the directory was made before the refusal", name)
		}
	}
	os.Mkdir(dir, 0o755)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	evil := top
	evil.Name = "../top"
	if err := a.Extract(t.Context(), root, evil); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("Extract of ../top: %v", err)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Fatalf("written beside the directory: %v", ents)
	}
}

// A member that does not authenticate is reported and skipped, leaving
// nothing of itself; the others come out.
func TestExtractAllSkipsDamagedMembers(t *testing.T) {
	a, path := treeArchive(t)
	damageMember(t, a, path, "dz")
	a = reopen(t, nil, path, true)
	defer a.Close()

	dir := t.TempDir()
	sel, _ := a.Select(nil)
	var heard []string
	rep, err := a.ExtractAll(t.Context(), dir, sel, &ExtractOptions{Damaged: func(e Entry, err error) {
		if errors.Is(err, ErrDamaged) {
			heard = append(heard, e.Name)
		}
	}})
	if err != nil || rep.Extracted != 3 || rep.Files != 4 || strings.Join(rep.Damaged, " ") != "dz" || strings.Join(heard, " ") != "dz" {
		t.Fatalf("%+v %v (heard %v)", rep, err, heard)
	}
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "d top" {
		t.Fatalf("left in the directory: %v", names)
	}
}
