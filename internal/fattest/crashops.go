package fattest

import (
	"bytes"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"
	"testing"
)

// CrashOp is one operation the crash tests interrupt after each of its
// writes (see CrashRuns), for a package whose FS is F.
type CrashOp[F any] struct {
	Name string
	Run  func(fs F) error
	// Touches lists the pre-existing paths (or directory prefixes ending
	// in "/") the operation changes; Check asserts their states.
	Touches []string
	Check   func(t *testing.T, fs F, pre map[string][]byte)
	// What the operation may leave on disk right after a crash: a chain
	// longer than its file (an append), two names of one file (a rename
	// between its writes), a moved directory's old ".." (FAT).
	LongChains, Rename, DirMove bool
}

// CrashFS is what the operations both packages interrupt alike ask of a
// filesystem.
type CrashFS interface {
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	ReadFile(name string) ([]byte, error)
	Remove(name string) error
	RemoveAll(name string) error
	MkdirAll(name string) error
}

// CommonCrashOps are the operations fat's and exfat's crash tests share,
// on the pre-existing trees both build (/dir, /victim.txt, /tree/a/b.txt,
// /tree/c.txt): put a new file, put over an existing one, rm, rm -r and
// mkdir -p.
func CommonCrashOps[F CrashFS](newData []byte) []CrashOp[F] {
	return []CrashOp[F]{
		{Name: "put new file", Run: func(fs F) error {
			return fs.WriteFile("/dir/new file.bin", newData, 0o644)
		}, Check: func(t *testing.T, fs F, pre map[string][]byte) {
			OneOf(t, fs, "/dir/new file.bin", nil, newData)
		}},
		{Name: "put over an existing file", Touches: []string{"/victim.txt"}, Run: func(fs F) error {
			return fs.WriteFile("/victim.txt", newData, 0o644)
		}, Check: func(t *testing.T, fs F, pre map[string][]byte) {
			OneOf(t, fs, "/victim.txt", pre["/victim.txt"], newData)
		}},
		{Name: "rm", Touches: []string{"/victim.txt"}, Run: func(fs F) error {
			return fs.Remove("/victim.txt")
		}, Check: func(t *testing.T, fs F, pre map[string][]byte) {
			OneOf(t, fs, "/victim.txt", pre["/victim.txt"], nil)
		}},
		{Name: "rm -r", Touches: []string{"/tree/"}, Run: func(fs F) error {
			return fs.RemoveAll("/tree")
		}, Check: func(t *testing.T, fs F, pre map[string][]byte) {
			OneOf(t, fs, "/tree/a/b.txt", pre["/tree/a/b.txt"], nil)
			OneOf(t, fs, "/tree/c.txt", pre["/tree/c.txt"], nil)
		}},
		{Name: "mkdir", Run: func(fs F) error {
			return fs.MkdirAll("/new/dir/deep")
		}, Check: func(t *testing.T, fs F, pre map[string][]byte) {}},
	}
}

// Intact checks that every file of pre that touches does not name (as a
// path, or under a prefix ending in "/") reads back whole from fsys.
func Intact(t *testing.T, what string, fsys interface {
	ReadFile(name string) ([]byte, error)
}, touches []string, pre map[string][]byte) {
	t.Helper()
next:
	for p, b := range pre {
		for _, x := range touches {
			if p == x || strings.HasSuffix(x, "/") && strings.HasPrefix(p, x) {
				continue next
			}
		}
		if got, err := fsys.ReadFile(p); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: pre-existing %s damaged: %v", what, p, err)
		}
	}
}

// AppendFile appends data to file p through open (a package's OpenFile).
func AppendFile[W io.WriteCloser](open func(name string, flag int, perm iofs.FileMode) (W, error), p string, data []byte) error {
	f, err := open(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Close()
}

// FillDir writes small files f0, f1, ... into dir (and into files) until
// full says that one more entry would make the directory grow.
func FillDir(t testing.TB, fsys interface {
	WriteFile(name string, data []byte, perm iofs.FileMode) error
}, dir string, files map[string][]byte, full func() bool) {
	t.Helper()
	for i := 0; !full(); i++ {
		n := fmt.Sprintf("%s/f%d", dir, i)
		files[n] = Pattern(100+i, 50)
		MustWrite(t, fsys, n, files[n])
	}
}

// Kept asserts that an interrupted rename of a to b lost nothing: one of
// the two reads back (both may, until recovery or where the new entry
// cannot be told from another, as for an empty file; never neither).
func Kept(t *testing.T, fsys interface {
	ReadFile(name string) ([]byte, error)
}, a, b string) {
	t.Helper()
	_, errA := fsys.ReadFile(a)
	_, errB := fsys.ReadFile(b)
	if errA != nil && errB != nil {
		t.Errorf("lost under both names: %s: %v; %s: %v", a, errA, b, errB)
	}
}
