package ext4

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cutDev is an image whose writes stop after limit (a crash: the write
// stream is cut; later writes fail and change nothing). With lossy set,
// writes since the last Sync are held back as a disk cache would, and at
// the cut only a random subset of them reaches the image.
type cutDev struct {
	f        *os.File
	writes   int
	limit    int // < 0: no limit
	lossy    *rand.Rand
	lastOnly bool
	pending  []pendingWrite
}

type pendingWrite struct {
	p   []byte
	off int64
}

var errCut = errors.New("the write stream was cut here")

func (d *cutDev) ReadAt(p []byte, off int64) (int, error) {
	n, err := d.f.ReadAt(p, off)
	for _, w := range d.pending { // what the cache holds, in order
		lo, hi := max(off, w.off), min(off+int64(len(p)), w.off+int64(len(w.p)))
		if lo < hi {
			copy(p[lo-off:hi-off], w.p[lo-w.off:hi-w.off])
		}
	}
	return n, err
}

// crash lets a subset of the held-back writes reach the image: a random
// one, or (lastOnly) only the last write, the worst reordering a cache
// can do to writes the writer put in order without a sync between them.
func (d *cutDev) crash() {
	if d.lossy != nil && d.pending != nil {
		for i, w := range d.pending {
			if d.lastOnly && i == len(d.pending)-1 || !d.lastOnly && d.lossy.IntN(2) == 0 {
				d.f.WriteAt(w.p, w.off)
			}
		}
		d.pending = nil
	}
}

func (d *cutDev) WriteAt(p []byte, off int64) (int, error) {
	if d.limit >= 0 && d.writes >= d.limit {
		d.crash()
		return 0, errCut
	}
	d.writes++
	if d.lossy != nil {
		d.pending = append(d.pending, pendingWrite{append([]byte(nil), p...), off})
		return len(p), nil
	}
	return d.f.WriteAt(p, off)
}

func (d *cutDev) Sync() error {
	if d.limit >= 0 && d.writes >= d.limit {
		d.crash()
		return errCut
	}
	for _, w := range d.pending {
		if _, err := d.f.WriteAt(w.p, w.off); err != nil {
			return err
		}
	}
	d.pending = d.pending[:0]
	return nil
}

// crashScript is the sequence of operations the crash test cuts: each
// kind of change, on an image filled by mkfs.ext4 -d.
func crashScript(w *Writer) error {
	f, err := w.Create("new")
	if err != nil {
		return err
	}
	big := bytes.Repeat([]byte("new file data "), 30000)
	if _, err := f.Write(big); err != nil {
		return err
	}
	steps := []func() error{
		func() error { return w.Rename("d1/d2/d3/file", "moved") },
		func() error { return w.Remove("empty") },
		func() error { return w.Mkdir("nd") },
		func() error { return w.Rename("many", "nd/many") },
		func() error {
			_, err := f.WriteAt([]byte("overwritten"), 100)
			return err
		},
		func() error { return w.Remove("nd/many/" + manyName(7)) },
		func() error { return w.Symlink(strings.Repeat("long/", 30), "slow-link") },
	}
	// Each step its own transaction, as a put or mv that syncs at the end.
	if err := w.Sync(); err != nil {
		return err
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
	}
	return nil
}

func manyName(i int) string {
	return fmt.Sprintf("a-rather-long-file-name-to-fill-directory-blocks-%04d", i)
}

func copyFile(t *testing.T, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
}

// TestWriterCrashRecovery cuts the write stream of crashScript after
// every single write. After e2fsck replays the journal, it must find
// nothing else to fix (e2fsck -fy answers no question, e2fsck -fn exits
// 0), and every file of the image must be in its state before or after
// the operation the cut fell in.
func TestWriterCrashRecovery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mkfs  []string
		step  int  // cut after every step-th write (every one with -ext4.long)
		lossy bool // and drop a subset of the writes since the last sync
	}{
		{"ext4", nil, 3, false},
		{"ext4-lossy", nil, 2, true},
		{"ext4-1k", []string{"-b", "1024"}, 7, false},
		{"ext3", []string{"-t", "ext3"}, 7, false},
		{"ext3-lossy", []string{"-t", "ext3"}, 5, true},
	} {
		if *longRun {
			tc.step = 1
		}
		t.Run(tc.name, func(t *testing.T) { crashRecovery(t, tc.mkfs, tc.step, tc.lossy) })
	}
}

func crashRecovery(t *testing.T, mkfs []string, step int, lossy bool) {
	src := csumSource(t)
	base := mkfsImage(t, 16<<20, src, mkfs...)
	// The files before, for the comparisons.
	before := map[string][]byte{}
	{
		dev, _ := os.Open(base)
		fi, _ := dev.Stat()
		f, err := Open(dev, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"d1/d2/d3/file", "sparse", "many/" + manyName(3), "many/" + manyName(7)} {
			if before[p], err = f.ReadFile(p); err != nil {
				t.Fatal(err)
			}
		}
		dev.Close()
	}
	run := func(limit int) (string, *cutDev) {
		img := filepath.Join(t.TempDir(), "crash.img")
		copyFile(t, base, img)
		f, err := os.OpenFile(img, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		dev := &cutDev{f: f, limit: limit}
		if lossy {
			dev.lossy = rand.New(rand.NewPCG(uint64(limit), 7))
			dev.lastOnly = (limit/step)%2 == 0
		}
		fi, _ := f.Stat()
		w, err := OpenWritable(dev, fi.Size())
		if err != nil {
			t.Fatal(err)
		}
		err = crashScript(w)
		if limit < 0 && err != nil {
			t.Fatal(err)
		}
		if err == nil {
			err = w.Close()
		}
		if limit >= 0 && err != nil && !errors.Is(err, errCut) {
			t.Fatalf("cut at %d: %v", limit, err)
		}
		if limit < 0 {
			dev.Sync()
		}
		return img, dev
	}
	_, full := run(-1)
	total := full.writes
	replayed := 0
	for limit := 0; limit <= total; limit += step {
		img, _ := run(limit)
		code, out := e2fsck(t, img, "-fy")
		if code > 1 || strings.Contains(out, "? yes") {
			t.Fatalf("cut after %d of %d writes: e2fsck -fy exit %d\n%s", limit, total, code, out)
		}
		if strings.Contains(out, "ecovering journal") {
			replayed++
		}
		if code, out := e2fsck(t, img, "-fn"); code != 0 {
			t.Fatalf("cut after %d of %d writes, after replay: e2fsck -fn exit %d\n%s", limit, total, code, out)
		}
		checkCrashState(t, img, limit, before)
	}
	t.Logf("%d writes, cut after every %d, %d cuts left a journal to replay", total, step, replayed)
	if replayed == 0 {
		t.Error("no cut point left a committed transaction for e2fsck to replay")
	}
}

// checkCrashState: each file is in its state before or after the script.
func checkCrashState(t *testing.T, img string, limit int, before map[string][]byte) {
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
	oneOf := func(want []byte, paths ...string) {
		found := 0
		for _, p := range paths {
			got, err := f.ReadFile(p)
			if err != nil {
				continue
			}
			found++
			if !bytes.Equal(got, want) {
				t.Errorf("cut %d: %s differs", limit, p)
			}
		}
		if found != 1 {
			t.Errorf("cut %d: %d of %v exist, want exactly one", limit, found, paths)
		}
	}
	oneOf(before["d1/d2/d3/file"], "d1/d2/d3/file", "moved")
	oneOf(before["sparse"], "sparse")
	oneOf(before["many/"+manyName(3)], "many/"+manyName(3), "nd/many/"+manyName(3))
	if got, err := f.ReadFile("new"); err == nil {
		full := bytes.Repeat([]byte("new file data "), 30000)
		over := append([]byte(nil), full...)
		copy(over[100:], "overwritten")
		if len(got) != 0 && !bytes.Equal(got, full) && !bytes.Equal(got, over) {
			t.Errorf("cut %d: new has %d bytes, neither empty nor written", limit, len(got))
		}
	}
}

// TestJournalReplayedByE2fsckAndKernel stops an operation right after its
// transaction is committed, before any block goes in place: only a replay
// of the journal (by e2fsck, and by the kernel on a rw loop mount) can
// make the change appear.
func TestJournalReplayedByE2fsckAndKernel(t *testing.T) {
	for _, tc := range []struct {
		name, fstype string
		mkfs         []string
	}{
		{"ext4", "ext4", nil},
		{"ext4-1k", "ext4", []string{"-b", "1024"}},
		{"ext4-no-csum", "ext4", []string{"-O", "^metadata_csum"}},
		{"ext3", "ext3", []string{"-t", "ext3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := mkfsImage(t, 16<<20, "", tc.mkfs...)
			dev, w := openImage(t, img)
			f, err := w.Create("kept")
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("before the crash"))
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			w.crashAfterCommit = true
			if err := w.Mkdir("only-in-the-journal"); err != nil {
				t.Fatal(err)
			}
			if err := w.Sync(); !errors.Is(err, errCrashed) {
				t.Fatalf("sync: %v, want the simulated crash", err)
			}
			dev.Close()
			// Unchanged in place: the reader (which does not replay) sees no
			// directory yet, and the filesystem says it needs recovery.
			if r, err := os.Open(img); err == nil {
				fi, _ := r.Stat()
				f, err := Open(r, fi.Size())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.Stat("only-in-the-journal"); err == nil {
					t.Fatal("the change is in place before the checkpoint")
				}
				if f.incompat&incompatRecover == 0 {
					t.Fatal("needs_recovery is not set")
				}
				r.Close()
			}
			kimg := filepath.Join(t.TempDir(), "kernel.img")
			copyFile(t, img, kimg)
			oimg := filepath.Join(t.TempDir(), "ours.img")
			copyFile(t, img, oimg)

			// OpenWritable replays it itself.
			_, ow := openImage(t, oimg)
			if st, err := ow.Stat("only-in-the-journal"); err != nil || !st.IsDir() {
				t.Fatalf("after OpenWritable's replay: %v", err)
			}
			ow.Close()
			fsckClean(t, oimg)

			code, out := e2fsck(t, img, "-fy")
			if code > 1 || strings.Contains(out, "? yes") || !strings.Contains(out, "ecovering journal") {
				t.Fatalf("e2fsck -fy: exit %d\n%s", code, out)
			}
			fsckClean(t, img)
			r, err := os.Open(img)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			fi, _ := r.Stat()
			rf, err := Open(r, fi.Size())
			if err != nil {
				t.Fatal(err)
			}
			if st, err := rf.Stat("only-in-the-journal"); err != nil || !st.IsDir() {
				t.Fatalf("after e2fsck's replay: %v", err)
			}

			// The kernel replays it when it mounts (read-write: a read-only
			// mount cannot replay).
			if os.Geteuid() != 0 {
				t.Log("kernel replay skipped: not root")
				return
			}
			mnt := t.TempDir()
			if out, err := exec.Command("timeout", "60", "mount", "-t", tc.fstype, "-o", "loop", kimg, mnt).CombinedOutput(); err != nil {
				t.Logf("kernel replay skipped: mount: %v: %s", err, out)
				return
			}
			_, statErr := os.Stat(filepath.Join(mnt, "only-in-the-journal"))
			kept, readErr := os.ReadFile(filepath.Join(mnt, "kept"))
			if out, err := exec.Command("timeout", "60", "umount", mnt).CombinedOutput(); err != nil {
				t.Fatalf("umount: %v: %s", err, out)
			}
			if statErr != nil || readErr != nil || string(kept) != "before the crash" {
				t.Fatalf("after the kernel's replay: %v, %v, %q", statErr, readErr, kept)
			}
			fsckClean(t, kimg)
		})
	}
}

// TestReplayKernelJournal: the kernel writes a journal (a rw loop mount,
// files written, overwritten and removed, synced), the image is copied
// while still mounted, so the copy needs recovery. OpenWritable's replay
// and e2fsck's must give the same files, and e2fsck -fn must find ours
// clean.
func TestReplayKernelJournal(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a rw loop mount")
	}
	img := mkfsImage(t, 32<<20, "")
	mnt := t.TempDir()
	if out, err := exec.Command("timeout", "60", "mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount: %v: %s", err, out)
	}
	mounted := true
	umount := func() {
		if mounted {
			mounted = false
			if out, err := exec.Command("timeout", "60", "umount", mnt).CombinedOutput(); err != nil {
				t.Errorf("umount: %v: %s", err, out)
			}
		}
	}
	defer umount()
	os.MkdirAll(filepath.Join(mnt, "gone/deep"), 0o755)
	for i := 0; i < 200; i++ {
		os.WriteFile(filepath.Join(mnt, "gone", fmt.Sprint(i)), bytes.Repeat([]byte{byte(i)}, 5000), 0o644)
	}
	exec.Command("sync").Run()
	os.RemoveAll(filepath.Join(mnt, "gone")) // revoke records
	for i := 0; i < 50; i++ {
		os.WriteFile(filepath.Join(mnt, fmt.Sprint("kept", i)), bytes.Repeat([]byte("k"), 1000*i), 0o644)
	}
	os.Mkdir(filepath.Join(mnt, "dir"), 0o700)
	os.WriteFile(filepath.Join(mnt, "dir", "f"), []byte("in dir"), 0o600)
	if out, err := exec.Command("sync", "-f", mnt).CombinedOutput(); err != nil {
		t.Fatalf("sync: %v: %s", err, out)
	}
	ours := filepath.Join(t.TempDir(), "ours.img")
	theirs := filepath.Join(t.TempDir(), "theirs.img")
	copyFile(t, img, ours)
	copyFile(t, img, theirs)
	umount()

	dev, err := os.Open(ours)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := dev.Stat()
	f, err := Open(dev, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	if f.incompat&incompatRecover == 0 {
		t.Fatal("the copy of the mounted image does not need recovery")
	}
	dev.Close()

	odev, err := os.OpenFile(ours, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := replayJournal(odev, fi.Size())
	odev.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d transactions, %d blocks, %d revoked", st.transactions, st.blocks, st.revoked)
	if st.blocks == 0 {
		t.Error("the kernel's journal had nothing to replay: the test proves nothing")
	}
	_, w := openImage(t, ours)
	w.Close()
	fsckClean(t, ours)
	if code, out := e2fsck(t, theirs, "-fy"); code > 1 {
		t.Fatalf("e2fsck -fy: exit %d\n%s", code, out)
	}
	read := func(img string) map[string]string {
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
		out := map[string]string{}
		var walk func(dir string)
		walk = func(dir string) {
			ents, err := f.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				p := dir + "/" + e.Name()
				if e.IsDir() {
					out[p] = "dir"
					walk(p)
					continue
				}
				b, err := f.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
			}
		}
		walk("")
		return out
	}
	a, b := read(ours), read(theirs)
	if len(a) != len(b) {
		t.Errorf("%d files after our replay, %d after e2fsck's", len(a), len(b))
	}
	for p, v := range b {
		if a[p] != v {
			t.Errorf("%s: ours %q, e2fsck's %q", p, a[p], v)
		}
	}
	if a["/dir/f"] == "" || a["/kept49"] == "" {
		t.Errorf("the files written before the copy are missing: %v", a)
	}
}

// TestReplayKernelOrphans: a file the kernel had open, and removed, when
// the image was copied is on its orphan list; OpenWritable replays the
// journal, releases the orphan, and e2fsck -fn finds nothing to mend (no
// leaked inode or block). Before, OpenWritable refused such an image.
func TestReplayKernelOrphans(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a rw loop mount")
	}
	img := mkfsImage(t, 32<<20, "")
	mnt := t.TempDir()
	if out, err := exec.Command("timeout", "60", "mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount: %v: %s", err, out)
	}
	mounted := true
	umount := func() {
		if mounted {
			mounted = false
			if out, err := exec.Command("timeout", "60", "umount", mnt).CombinedOutput(); err != nil {
				t.Errorf("umount: %v: %s", err, out)
			}
		}
	}
	defer umount()
	open := filepath.Join(mnt, "open-and-removed")
	if err := os.WriteFile(open, bytes.Repeat([]byte("o"), 300000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(open)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Remove(open); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "kept"), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sync", "-f", mnt).CombinedOutput(); err != nil {
		t.Fatalf("sync: %v: %s", err, out)
	}
	ours := filepath.Join(t.TempDir(), "ours.img")
	copyFile(t, img, ours)
	f.Close()
	umount()

	dev, err := os.OpenFile(ours, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := dev.Stat()
	st, err := replayJournal(dev, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(dev, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	m, _ := loadMeta(r)
	orphan := binary.LittleEndian.Uint32(m.sb[0xE8:])
	t.Logf("replayed %d blocks; orphan list starts at inode %d", st.blocks, orphan)
	if orphan == 0 {
		dev.Close()
		t.Skip("the kernel had not put the open file on the orphan list in the journal yet")
	}
	dev.Close()
	_, w := openImage(t, ours)
	if got, err := w.ReadFile("kept"); err != nil || string(got) != "kept" {
		t.Fatalf("kept: %q %v", got, err)
	}
	w.Close()
	fsckClean(t, ours)
}
