package fsops_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/fsops"
)

type memDev struct{ b []byte }

func (m *memDev) ReadAt(p []byte, off int64) (int, error)  { return copy(p, m.b[off:]), nil }
func (m *memDev) WriteAt(p []byte, off int64) (int, error) { return copy(m.b[off:], p), nil }

// TestTreeOnExt4AndExFAT runs the same put/rm/mkdir operations on both
// in-process writers and has the filesystems' own checkers (e2fsck,
// fsck.exfat) judge the images afterwards.
func TestTreeOnExt4AndExFAT(t *testing.T) {
	for _, typ := range []string{"ext4", "exfat"} {
		t.Run(typ, func(t *testing.T) {
			const size = 16 << 20
			dev := &memDev{make([]byte, size)}
			img := filepath.Join(t.TempDir(), "fs.img")
			switch typ {
			case "ext4":
				if err := filesystem.FormatExt4(dev, size, "OPS", 0); err != nil {
					t.Fatal(err)
				}
			case "exfat":
				mkfs, err := exec.LookPath("mkfs.exfat")
				if err != nil {
					t.Skip("mkfs.exfat (exfatprogs) is not installed")
				}
				os.WriteFile(img, dev.b, 0o600)
				if out, err := tool(t, mkfs, img).CombinedOutput(); err != nil {
					t.Fatalf("mkfs.exfat: %v\n%s", err, out)
				}
				dev.b, _ = os.ReadFile(img)
			}
			fsys, err := filesystem.OpenAs(typ, dev, size, filesystem.Options{Writable: true})
			if err != nil {
				t.Fatal(err)
			}
			w := fsys.(filesystem.Writer)
			tr := fsops.New(w, typ, 0o022)
			if err := tr.MkdirAll("/a/b/c"); err != nil {
				t.Fatal(err)
			}
			if err := tr.MkdirAll("/a/b"); err != nil {
				t.Errorf("MkdirAll of an existing directory: %v", err)
			}
			f, err := tr.CreateExcl("/a/b/c/f.txt", 0o640)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("data"))
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := tr.CreateExcl("/a/b/c/f.txt", 0o640); !errors.Is(err, fs.ErrExist) {
				t.Errorf("CreateExcl of an existing file: %v, want fs.ErrExist", err)
			}
			if err := tr.MkdirAll("/a/b/c/f.txt/d"); !errors.Is(err, filesystem.ErrNotDir) {
				t.Errorf("MkdirAll through a file: %v, want ErrNotDir", err)
			}
			fi, err := tr.Stat("/a/b/c/f.txt")
			if err != nil || fi.Size() != 4 {
				t.Fatalf("Stat: %v, %v", fi, err)
			}
			if typ == "ext4" && fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want 0640 (0640 less umask 022)", fi.Mode().Perm())
			}
			err = tr.Symlink("f.txt", "/a/link")
			if typ == "exfat" && !errors.Is(err, filesystem.ErrUnsupported) {
				t.Errorf("symlink on exFAT: %v, want ErrUnsupported", err)
			} else if typ == "ext4" && err != nil {
				t.Errorf("symlink on ext4: %v", err)
			}
			tr.MkdirAll("/keep")
			if err := tr.RemoveAll("/a"); err != nil {
				t.Fatal(err)
			}
			if err := tr.RemoveAll("/a"); err != nil {
				t.Errorf("RemoveAll of a missing name: %v", err)
			}
			if err := tr.RemoveAll("/"); !errors.Is(err, fs.ErrPermission) {
				t.Errorf("RemoveAll of the root: %v", err)
			}
			if _, err := tr.Stat("/a"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("/a after RemoveAll: %v", err)
			}
			if ents, _ := tr.ReadDir("/"); len(ents) == 0 {
				t.Error("RemoveAll(/a) removed /keep too")
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			checker := map[string][]string{"ext4": {"e2fsck", "-fn"}, "exfat": {"fsck.exfat", "-n"}}[typ]
			path, err := exec.LookPath(checker[0])
			if err != nil {
				t.Skipf("%s is not installed: the image is not checked", checker[0])
			}
			os.WriteFile(img, dev.b, 0o600)
			if out, err := tool(t, path, append(checker[1:], img)...).CombinedOutput(); err != nil {
				t.Errorf("%s finds errors: %v\n%s", checker[0], err, out)
			}
		})
	}
}

// tool runs an external program with a deadline: a tool that hangs fails
// the test in a minute instead of holding the whole package to its timeout.
func tool(t *testing.T, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return exec.CommandContext(ctx, name, args...)
}
