package filesystem_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/fstree"
)

func needTool(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed (e2fsprogs / ntfs-3g: .ci/run installs them)", n)
		}
	}
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// openImage opens an image file through filesystem.Open (probing).
func openImage(t testing.TB, p string) filesystem.FS {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	fsys, err := filesystem.Open(f, fi.Size(), filesystem.Options{})
	if err != nil {
		t.Fatalf("Open %s: %v", p, err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// ext4Configs are the feature sets the reader is checked on, each made by
// mkfs.ext4 -d from the same kind of tree.
var ext4Configs = []struct {
	name string
	args []string
	spec fstree.Spec
	typ  string
	// proof is a debugfs request and what its output must contain, to
	// show the image really uses the feature under test.
	proof [2]string
	// index runs e2fsck -D, which turns large directories into hash
	// trees (mke2fs -d writes linear ones).
	index bool
}{
	{"ext4-default", nil, fstree.Spec{ManyFiles: 100, LargeSize: 3 << 20, SparseTail: 5 << 20, Links: true}, "ext4", [2]string{"stats", "metadata_csum"}, false},
	{"ext4-nocsum-32bit", []string{"-O", "^metadata_csum,^64bit"}, fstree.Spec{ManyFiles: 100, LargeSize: 1 << 20, SparseTail: 5 << 20, Links: true}, "ext4", [2]string{"stats", "Filesystem features:      has_journal ext_attr resize_inode dir_index filetype extent flex_bg"}, false},
	{"ext4-inline", []string{"-O", "inline_data"}, fstree.Spec{ManyFiles: 300, LargeSize: 1 << 20, SparseTail: 5 << 20, Links: true}, "ext4", [2]string{"stat /small.txt", "Size of inline data"}, false},
	{"ext4-htree-largedir-nojournal", []string{"-O", "large_dir,^has_journal", "-b", "1024"}, fstree.Spec{ManyFiles: 5000, LargeSize: 1 << 20, SparseTail: 5 << 20, Links: true}, "ext4", [2]string{"htree /many", "Number of entries (count):"}, true},
	{"ext4-noextent-1k", []string{"-O", "^extent,^flex_bg,^64bit", "-b", "1024"}, fstree.Spec{ManyFiles: 50, LargeSize: 9 << 20, SparseTail: 70 << 20, Links: true}, "ext4", [2]string{"stat /sparse.bin", "(TIND)"}, false},
	{"ext2-1k-128", []string{"-t", "ext2", "-b", "1024", "-I", "128"}, fstree.Spec{ManyFiles: 50, LargeSize: 9 << 20, SparseTail: 70 << 20, Links: true}, "ext2", [2]string{"stat /sparse.bin", "(TIND)"}, false},
	{"ext3", []string{"-t", "ext3"}, fstree.Spec{ManyFiles: 50, LargeSize: 5 << 20, SparseTail: 5 << 20, Links: true}, "ext3", [2]string{"stats", "has_journal"}, false},
	{"ext4-metabg", []string{"-O", "meta_bg,^resize_inode", "-b", "1024"}, fstree.Spec{ManyFiles: 50, LargeSize: 1 << 20, SparseTail: 5 << 20, Links: true}, "ext4", [2]string{"stats", "meta_bg"}, false},
	{"ext4-64k", []string{"-b", "65536"}, fstree.Spec{ManyFiles: 50, LargeSize: 1 << 20, SparseTail: 5 << 20, Links: true}, "ext4", [2]string{"stats", "Block size:               65536"}, false},
}

// TestExt4FromMkfs builds each image with mkfs.ext4 -d, checks it with
// e2fsck -fn, and reads it back through filesystem.Open: every name, type,
// size, time (mke2fs -d copies whole seconds), link and sha256 must match
// the source tree, and each directory's inode numbers what debugfs lists.
func TestExt4FromMkfs(t *testing.T) {
	needTool(t, "mkfs.ext4", "e2fsck", "debugfs")
	for _, c := range ext4Configs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			src := filepath.Join(dir, "src")
			os.Mkdir(src, 0o755)
			fstree.Build(t, src, c.spec)
			img := filepath.Join(dir, "fs.img")
			args := append([]string{"-q", "-F", "-L", "label-" + c.typ, "-U", "0d7a8c2e-1b2f-4c3d-9e8f-0123456789ab", "-d", src}, c.args...)
			args = append(args, img, "128M")
			run(t, "mkfs.ext4", args...)
			if c.index {
				// Exit status 1: "errors corrected" (the directories rebuilt).
				if err := exec.Command("e2fsck", "-fyD", img).Run(); err != nil && exitCode(err) != 1 {
					t.Fatalf("e2fsck -fyD: %v", err)
				}
			}
			run(t, "e2fsck", "-fn", img)
			if out := run(t, "debugfs", "-R", c.proof[0], img); !strings.Contains(out, c.proof[1]) {
				t.Fatalf("debugfs %s: no %q: the image does not use the feature under test\n%s", c.proof[0], c.proof[1], out)
			}
			fsys := openImage(t, img)
			if fsys.Type() != c.typ || fsys.Label() != "label-"+c.typ || fsys.ID() != "0d7a8c2e-1b2f-4c3d-9e8f-0123456789ab" {
				t.Errorf("type %q label %q id %q", fsys.Type(), fsys.Label(), fsys.ID())
			}
			fstree.Check(t, fsys, src, fstree.Options{TimeResolution: time.Second, Ignore: []string{"lost+found"}, NoDirTimes: true})
			for _, d := range []string{"/", "/a", "/many"} {
				checkDebugfsListing(t, fsys, img, d)
			}
			checkStatfsDumpe2fs(t, fsys, img)
		})
	}
}

// checkDebugfsListing compares a directory's names and inode numbers with
// debugfs's "ls -p" (/ino/mode/uid/gid/name/size/).
func checkDebugfsListing(t *testing.T, fsys filesystem.FS, img, dir string) {
	out := run(t, "debugfs", "-R", "ls -p "+dir, img)
	want := map[string]uint64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "/")
		if len(f) < 7 || f[5] == "." || f[5] == ".." || f[5] == "" {
			continue
		}
		ino, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			continue
		}
		want[f[5]] = ino
	}
	ents, err := fsys.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(want) {
		t.Errorf("%s: %d entries, debugfs lists %d", dir, len(ents), len(want))
	}
	for _, e := range ents {
		fi, _ := e.Info()
		ino := fi.Sys().(filesystem.InodeInfo).Inode()
		if w, ok := want[e.Name()]; !ok || w != ino {
			t.Errorf("%s/%s: inode %d, debugfs %d (listed: %v)", dir, e.Name(), ino, w, ok)
		}
	}
}

// checkStatfsDumpe2fs compares Statfs with dumpe2fs -h's counts.
func checkStatfsDumpe2fs(t *testing.T, fsys filesystem.FS, img string) {
	out := run(t, "dumpe2fs", "-h", img)
	field := func(name string) int64 {
		for _, l := range strings.Split(out, "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == name {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return n
			}
		}
		t.Fatalf("dumpe2fs: no %q", name)
		return 0
	}
	s := fsys.Statfs()
	bs := field("Block size")
	if int64(s.BlockSize) != bs || s.TotalBytes != field("Block count")*bs || s.FreeBytes != field("Free blocks")*bs ||
		s.AvailBytes != (field("Free blocks")-field("Reserved block count"))*bs || int64(s.Files) != field("Inode count") {
		t.Errorf("statfs %+v; dumpe2fs block size %d, %d blocks, %d free", s, bs, field("Block count"), field("Free blocks"))
	}
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
