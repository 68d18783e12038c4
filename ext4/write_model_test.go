package ext4

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

var (
	longRun   = flag.Bool("ext4.long", false, "run the ext4 tests' long campaigns (the model tests also with CRYPTVOL_EXT4_LONG=1)")
	modelSeed = flag.Uint64("ext4.seed", 0, "seed of the ext4 writer's model tests (0: fixed seeds)")
)

// modelLong reports whether the model tests run their long campaign:
// -ext4.long, or CRYPTVOL_EXT4_LONG=1 where flags cannot be passed (CI).
func modelLong() bool { return *longRun || os.Getenv("CRYPTVOL_EXT4_LONG") == "1" }

// modelMaxPath bounds the model's path lengths so that the kernel view can
// reach every file by its full path (PATH_MAX is 4096, with the mount
// point in front).
const modelMaxPath = 3500

// mnode is the model of one inode.
type mnode struct {
	id     int
	dir    bool
	target string // symbolic link target ("" for others)
	data   []byte
	mode   fs.FileMode
	mtime  time.Time
	nlink  int
}

// model is what the filesystem should hold: paths to inodes.
type model struct {
	paths  map[string]*mnode // "/" is the root
	nextID int
}

func newModel(rootMtime time.Time) *model {
	return &model{paths: map[string]*mnode{"/": {dir: true, mode: fs.ModeDir | 0o755, nlink: 2, mtime: rootMtime}}}
}

func (m *model) sorted(filter func(*mnode) bool) []string {
	var out []string
	for p, n := range m.paths {
		if filter(n) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (m *model) children(dir string) []string {
	var out []string
	for p := range m.paths {
		if p != "/" && path.Dir(p) == dir {
			out = append(out, p)
		}
	}
	return out
}

// requireIndexed fails unless the directory of img is an htree.
func requireIndexed(t *testing.T, img, dir string) {
	t.Helper()
	dev, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	fi, _ := dev.Stat()
	f, err := Open(dev, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	in, err := f.lookup("stat", dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if in.flags&flagIndex == 0 {
		t.Fatalf("%s is not indexed: the test would not cover htree directories", dir)
	}
}

// modelFrom adds what the filesystem holds (but lost+found) to the model.
func modelFrom(f *FS, m *model) error {
	byIno := map[uint64]*mnode{}
	root, err := f.Stat("/")
	if err != nil {
		return err
	}
	m.paths["/"].nlink = int(root.Nlink())
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := f.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			if p == "/lost+found" {
				continue
			}
			fi := e.(*FileInfo)
			if n := byIno[fi.Inode()]; n != nil {
				m.paths[p] = n
				continue
			}
			m.nextID++
			n := &mnode{id: m.nextID, dir: fi.IsDir(), mode: fi.Mode(), mtime: fi.ModTime(), nlink: int(fi.Nlink())}
			byIno[fi.Inode()] = n
			m.paths[p] = n
			switch {
			case fi.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case fi.Mode()&fs.ModeSymlink != 0:
				if n.target, err = f.Readlink(p); err != nil {
					return err
				}
			default:
				if n.data, err = f.ReadFile(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk("/")
}

// modelClock is the writer's clock in the test: every call a new instant,
// with nanoseconds, some past 2038.
type modelClock struct{ t time.Time }

func (c *modelClock) now() time.Time {
	c.t = c.t.Add(1733*time.Millisecond + 7)
	return c.t
}

// randName makes names of every kind: short, long (up to 255 bytes),
// Unicode, with spaces and dots.
func randName(r *rand.Rand) string {
	parts := []string{"a", "Z", "é", "日本", "ü", " ", ".", "-", "_", "x9", "ß", "😀", "file", "dir"}
	n := 1 + r.IntN(12)
	if r.IntN(8) == 0 {
		n = 60 + r.IntN(80)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		p := parts[r.IntN(len(parts))]
		if b.Len()+len(p) > MaxNameLen {
			break
		}
		b.WriteString(p)
	}
	s := b.String()
	if s == "." || s == ".." || s == "" {
		s = "n"
	}
	return s
}

func randData(r *rand.Rand, max int) []byte {
	var n int
	switch r.IntN(10) {
	case 0:
		n = 0
	case 1, 2:
		n = r.IntN(max + 1)
	default:
		n = r.IntN(9000)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// modelRun applies ops random operations to the writer and the model.
func modelRun(t *testing.T, w *Writer, m *model, clock *modelClock, r *rand.Rand, ops, maxFile int) {
	files := func() []string { return m.sorted(func(n *mnode) bool { return !n.dir && n.target == "" }) }
	dirs := func() []string { return m.sorted(func(n *mnode) bool { return n.dir }) }
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	noSpace := func(op string, err error) bool {
		if err == nil {
			return false
		}
		if errors.Is(err, ErrNoSpace) {
			t.Logf("%s: %v (refused, the model is unchanged)", op, err)
			return true
		}
		t.Fatalf("%s: %v", op, err)
		return true
	}
	roomyDirs := func() []string { // dirs that take one more name of any length
		var out []string
		for _, d := range dirs() {
			if len(d)+1+MaxNameLen <= modelMaxPath {
				out = append(out, d)
			}
		}
		return out
	}
	newPath := func() string {
		for {
			p := path.Join(pick(roomyDirs()), randName(r))
			if m.paths[p] == nil {
				return p
			}
		}
	}
	touchParent := func(p string) {
		m.paths[path.Dir(p)].mtime = clock.t
	}
	for i := 0; i < ops; i++ {
		if r.IntN(12) == 0 { // commit now and then, as a put that syncs
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
		}
		switch op := r.IntN(20); {
		case op < 5: // create and write, in one or several calls
			p := newPath()
			f, err := w.Create(p)
			if noSpace("create "+p, err) {
				continue
			}
			m.nextID++
			n := &mnode{id: m.nextID, mode: 0o644, mtime: clock.t, nlink: 1}
			m.paths[p] = n
			touchParent(p)
			data := randData(r, maxFile)
			for off := 0; off < len(data); {
				k := min(len(data)-off, 1+r.IntN(200000))
				if _, err := f.Write(data[off : off+k]); noSpace("write "+p, err) {
					break
				}
				n.data = append(n.data, data[off:off+k]...)
				n.mtime = clock.t
				off += k
			}
			f.Close()
		case op < 8: // write at a random offset (perhaps past the end)
			fl := files()
			if len(fl) == 0 {
				continue
			}
			p := fl[r.IntN(len(fl))]
			n := m.paths[p]
			off := int64(r.IntN(len(n.data) + 1 + r.IntN(3)*300000))
			data := randData(r, maxFile/4)
			if len(data) == 0 {
				data = []byte{1}
			}
			f, err := w.Create2(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(data, off); !noSpace("writeat "+p, err) {
				if end := int(off) + len(data); end > len(n.data) {
					n.data = append(n.data, make([]byte, end-len(n.data))...)
				}
				copy(n.data[off:], data)
				n.mtime = clock.t
			}
			f.Close()
		case op < 10: // truncate
			fl := files()
			if len(fl) == 0 {
				continue
			}
			p := pick(fl)
			n := m.paths[p]
			size := int64(r.IntN(len(n.data) + 1))
			if r.IntN(3) == 0 {
				size = int64(len(n.data) + r.IntN(500000))
			}
			f, err := w.Create2(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(size); err != nil {
				t.Fatalf("truncate %s: %v", p, err)
			}
			if int(size) <= len(n.data) {
				n.data = n.data[:size]
			} else {
				n.data = append(n.data, make([]byte, int(size)-len(n.data))...)
			}
			n.mtime = clock.t
			f.Close()
		case op < 12: // mkdir
			p := newPath()
			if noSpace("mkdir "+p, w.Mkdir(p)) {
				continue
			}
			m.nextID++
			m.paths[p] = &mnode{id: m.nextID, dir: true, mode: fs.ModeDir | 0o755, nlink: 2, mtime: clock.t}
			m.paths[path.Dir(p)].nlink++
			touchParent(p)
		case op < 14: // remove a file, a link or an empty directory
			all := m.sorted(func(n *mnode) bool { return true })
			p := pick(all)
			if p == "/" {
				continue
			}
			n := m.paths[p]
			err := w.Remove(p)
			if n.dir && len(m.children(p)) > 0 {
				if !errors.Is(err, ErrNotEmpty) {
					t.Fatalf("remove non-empty %s: %v, want ErrNotEmpty", p, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("remove %s: %v", p, err)
			}
			delete(m.paths, p)
			n.nlink--
			if n.dir {
				m.paths[path.Dir(p)].nlink--
			}
			touchParent(p)
		case op < 16: // rename, sometimes over an existing file
			all := m.sorted(func(n *mnode) bool { return true })
			p := pick(all)
			if p == "/" {
				continue
			}
			n := m.paths[p]
			var q string
			if fl := files(); !n.dir && len(fl) > 0 && r.IntN(3) == 0 {
				q = pick(fl)
			} else {
				q = newPath()
			}
			if n.dir && (q == p || strings.HasPrefix(q, p+"/")) {
				if err := w.Rename(p, q); err == nil {
					t.Fatalf("rename %s into itself (%s) succeeded", p, q)
				}
				continue
			}
			if n.dir && movedTooDeep(m, p, q) {
				continue
			}
			err := w.Rename(p, q)
			if noSpace("rename "+p, err) {
				continue
			}
			if old := m.paths[q]; old != nil && old != n {
				old.nlink--
			}
			if m.paths[q] == n {
				continue // the same inode: nothing happens
			}
			if n.dir {
				m.paths[path.Dir(p)].nlink--
				m.paths[path.Dir(q)].nlink++
			}
			for k, v := range m.paths {
				if k == p || strings.HasPrefix(k, p+"/") {
					delete(m.paths, k)
					m.paths[q+k[len(p):]] = v
				}
			}
			touchParent(p)
			touchParent(q)
		case op < 17: // chtimes and chmod
			all := m.sorted(func(n *mnode) bool { return n.target == "" })
			p := pick(all)
			n := m.paths[p]
			mt := time.Unix(int64(r.Uint32())+int64(r.IntN(3))<<32, int64(r.IntN(1e9)))
			if err := w.Chtimes(p, time.Time{}, mt); err != nil {
				t.Fatal(err)
			}
			n.mtime = mt
			perm := fs.FileMode(r.IntN(0o1000))
			if n.dir {
				perm |= 0o700
			}
			if err := w.Chmod(p, perm); err != nil {
				t.Fatal(err)
			}
			n.mode = n.mode.Type() | perm
		case op < 18: // hard link
			fl := files()
			if len(fl) == 0 {
				continue
			}
			p, q := pick(fl), newPath()
			if noSpace("link "+q, w.Link(p, q)) {
				continue
			}
			m.paths[q] = m.paths[p]
			m.paths[p].nlink++
			touchParent(q)
		case op < 19: // symlink, fast or slow
			q := newPath()
			target := strings.Repeat("t/", 60)[:1+r.IntN(110)]
			if noSpace("symlink "+q, w.Symlink(target, q)) {
				continue
			}
			m.nextID++
			m.paths[q] = &mnode{id: m.nextID, target: target, mode: fs.ModeSymlink | 0o777, mtime: clock.t, nlink: 1}
			touchParent(q)
		default: // create over an existing file empties it
			fl := files()
			if len(fl) == 0 {
				continue
			}
			p := pick(fl)
			f, err := w.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			m.paths[p].data = nil
			m.paths[p].mtime = clock.t
		}
	}
}

// movedTooDeep reports whether renaming directory p to q would give one of
// its descendants a path longer than modelMaxPath.
func movedTooDeep(m *model, p, q string) bool {
	deepest := 0
	for k := range m.paths {
		if strings.HasPrefix(k, p+"/") {
			deepest = max(deepest, len(k)-len(p))
		}
	}
	return len(q)+deepest > modelMaxPath
}

// Create2 opens an existing regular file for writing without emptying it
// (the test's way to write into the middle of a file).
func (w *Writer) Create2(name string) (*WFile, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	in, err := w.lookup("open", name, false)
	if err != nil {
		return nil, err
	}
	raw, err := w.m.readRawInode(in.ino)
	if err != nil {
		return nil, err
	}
	return &WFile{w: w, ino: in.ino, gen: binary.LittleEndian.Uint32(raw[inoGeneration:]), name: name}, nil
}

// viewer is a filesystem view to compare with the model: the package's
// reader or the kernel's mount.
type viewer struct {
	lstat    func(p string) (mode fs.FileMode, size int64, mtime time.Time, nlink uint64, ino uint64, err error)
	readFile func(p string) ([]byte, error)
	readlink func(p string) (string, error)
	list     func(p string) ([]string, error)
}

func compareView(t *testing.T, who string, v viewer, m *model) {
	t.Helper()
	seen := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		names, err := v.list(dir)
		if err != nil {
			t.Fatalf("%s: list %s: %v", who, dir, err)
		}
		for _, name := range names {
			p := path.Join(dir, name)
			if dir == "/" && name == "lost+found" && m.paths[p] == nil {
				continue
			}
			seen[p] = true
			if m.paths[p] == nil {
				t.Errorf("%s: %s is there, the model has no such file", who, p)
				continue
			}
			if m.paths[p].dir {
				walk(p)
			}
		}
	}
	walk("/")
	for p, n := range m.paths {
		if p != "/" && !seen[p] {
			t.Errorf("%s: %s missing", who, p)
			continue
		}
		mode, size, mtime, nlink, _, err := v.lstat(p)
		if err != nil {
			t.Errorf("%s: lstat %s: %v", who, p, err)
			continue
		}
		if mode != n.mode {
			t.Errorf("%s: %s: mode %v, want %v", who, p, mode, n.mode)
		}
		if !mtime.Equal(n.mtime) {
			t.Errorf("%s: %s: mtime %v, want %v", who, p, mtime, n.mtime)
		}
		if int(nlink) != n.nlink {
			t.Errorf("%s: %s: %d links, want %d", who, p, nlink, n.nlink)
		}
		switch {
		case n.target != "":
			got, err := v.readlink(p)
			if err != nil || got != n.target {
				t.Errorf("%s: readlink %s: %q, %v; want %q", who, p, got, err, n.target)
			}
		case !n.dir:
			if size != int64(len(n.data)) {
				t.Errorf("%s: %s: size %d, want %d", who, p, size, len(n.data))
			}
			got, err := v.readFile(p)
			if err != nil {
				t.Errorf("%s: read %s: %v", who, p, err)
			} else if sha256.Sum256(got) != sha256.Sum256(n.data) {
				t.Errorf("%s: %s: content differs (%d bytes, want %d)", who, p, len(got), len(n.data))
			}
		}
	}
}

func readerView(f *FS) viewer {
	return viewer{
		lstat: func(p string) (fs.FileMode, int64, time.Time, uint64, uint64, error) {
			fi, err := f.Lstat(p)
			if err != nil {
				return 0, 0, time.Time{}, 0, 0, err
			}
			return fi.Mode(), fi.Size(), fi.ModTime(), fi.Nlink(), fi.Inode(), nil
		},
		readFile: f.ReadFile,
		readlink: f.Readlink,
		list: func(p string) ([]string, error) {
			ents, err := f.ReadDir(p)
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			return names, err
		},
	}
}

func kernelView(root string) viewer {
	return viewer{
		lstat: func(p string) (fs.FileMode, int64, time.Time, uint64, uint64, error) {
			fi, err := os.Lstat(filepath.Join(root, p))
			if err != nil {
				return 0, 0, time.Time{}, 0, 0, err
			}
			nlink, ino := linksAndInode(fi)
			return fi.Mode(), fi.Size(), fi.ModTime(), nlink, ino, nil
		},
		readFile: func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(root, p)) },
		readlink: func(p string) (string, error) { return os.Readlink(filepath.Join(root, p)) },
		list: func(p string) ([]string, error) {
			ents, err := os.ReadDir(filepath.Join(root, p))
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			return names, err
		},
	}
}

// kernelMount mounts img read-only through a loop device and returns the
// mount point and the unmount (also run when the test ends; mount reuses
// the loop device of an image already mounted, so a second look at a
// changed image must unmount the first). why says what is missing when
// this machine cannot loop-mount: not root, no loop devices.
func kernelMount(t *testing.T, img, fstype string) (dir string, unmount func(), why string) {
	if os.Geteuid() != 0 {
		return "", nil, "not root"
	}
	if _, err := exec.LookPath("mount"); err != nil {
		return "", nil, "no mount program"
	}
	dir = t.TempDir()
	out, err := exec.Command("timeout", "60", "mount", "-t", fstype, "-o", "loop,ro", img, dir).CombinedOutput()
	if err != nil {
		return "", nil, fmt.Sprintf("mount: %v: %s", err, out)
	}
	mounted := true
	unmount = func() {
		if !mounted {
			return
		}
		mounted = false
		if out, err := exec.Command("timeout", "60", "umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	}
	t.Cleanup(unmount)
	return dir, unmount, ""
}

type modelCase struct {
	name   string
	size   int64
	mkfs   []string // options of mkfs.ext4
	fstype string   // for mount -t
	ops    int
	max    int  // largest file
	filled bool // made with mkfs.ext4 -d and indexed by e2fsck -D first
	ours   bool // made by Format instead of mkfs.ext4
}

func TestWriterModel(t *testing.T) {
	cases := []modelCase{
		{"default-64M", 64 << 20, nil, "ext4", 160, 3 << 20, false, false},
		{"1k-blocks-16M", 16 << 20, []string{"-b", "1024"}, "ext4", 140, 2 << 20, false, false},
		{"no-metadata-csum", 32 << 20, []string{"-O", "^metadata_csum,uninit_bg"}, "ext4", 100, 2 << 20, false, false},
		{"no-64bit", 32 << 20, []string{"-O", "^64bit"}, "ext4", 100, 2 << 20, false, false},
		{"ext3", 32 << 20, []string{"-t", "ext3"}, "ext3", 100, 2 << 20, false, false},
		{"ext2-1k", 16 << 20, []string{"-t", "ext2", "-b", "1024"}, "ext2", 100, 2 << 20, false, false},
		{"tiny-1M", 1 << 20, nil, "ext4", 120, 400 << 10, false, false},
		{"sparse-1G", 1 << 30, nil, "ext4", 60, 4 << 20, false, false},
		{"filled-htree", 64 << 20, nil, "ext4", 200, 1 << 20, true, false},
		{"filled-htree-1k", 32 << 20, []string{"-b", "1024"}, "ext4", 200, 1 << 20, true, false},
		{"filled-ext3", 32 << 20, []string{"-t", "ext3"}, "ext3", 150, 1 << 20, true, false},
		{"formatted-300M", 300 << 20, nil, "ext4", 150, 4 << 20, false, true},
	}
	seeds := []uint64{1, 2}
	if *modelSeed != 0 {
		seeds = []uint64{*modelSeed}
	}
	for _, tc := range cases {
		for _, seed := range seeds {
			tc := tc
			if modelLong() {
				tc.ops *= 20
				if tc.size >= 64<<20 {
					tc.max = max(tc.max, 20<<20) // files up to 20 MB
				}
			}
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) { runModelCase(t, tc, seed) })
		}
	}
}

func runModelCase(t *testing.T, tc modelCase, seed uint64) {
	src := ""
	if tc.filled {
		src = csumSource(t)
	}
	img := mkfsImage(t, tc.size, src, tc.mkfs...)
	if tc.ours {
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := Format(f, tc.size, FormatOptions{}); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	if tc.filled {
		if code, out := e2fsck(t, img, "-fyD"); code > 1 {
			t.Fatalf("e2fsck -fyD: exit %d\n%s", code, out)
		}
		requireIndexed(t, img, "/many")
	}
	dev, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	w, err := OpenWritable(dev, tc.size)
	if err != nil {
		t.Fatal(err)
	}
	clock := &modelClock{t: time.Unix(1<<31+12345, 999999937)}
	w.Now = clock.now
	rootFi, err := w.Stat("/")
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(rootFi.ModTime())
	if err := modelFrom(w.FS, m); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, uint64(len(tc.name))))
	modelRun(t, w, m, clock, r, tc.ops, tc.max)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if t.Failed() {
		return
	}
	if code, out := e2fsck(t, img, "-fn"); code != 0 {
		t.Fatalf("e2fsck -fn: exit %d\n%s", code, out)
	}
	f, err := Open(dev, tc.size)
	if err != nil {
		t.Fatal(err)
	}
	if f.roCompat&roCompatMetadataCsum != 0 {
		bad, _, err := verifyChecksums(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range bad {
			t.Error(b)
		}
	}
	compareView(t, "reader", readerView(f), m)
	if tc.filled {
		// The indexed directory took new names: its index is gone.
		in, err := f.lookup("stat", "/many", true)
		if err == nil {
			t.Logf("/many: index flag %v", in.flags&flagIndex != 0)
		}
	}
	dir, _, why := kernelMount(t, img, tc.fstype)
	if why != "" {
		t.Logf("kernel check skipped: %s", why)
		return
	}
	compareView(t, "kernel", kernelView(dir), m)
	if !t.Failed() {
		t.Logf("%d paths; e2fsck -fn clean; kernel and reader agree with the model", len(m.paths))
	}
}
