package ext4

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// openImage opens an image file for writing.
func openImage(t *testing.T, img string) (*os.File, *Writer) {
	t.Helper()
	dev, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dev.Close() })
	fi, _ := dev.Stat()
	w, err := OpenWritable(dev, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	return dev, w
}

func fsckClean(t *testing.T, img string) {
	t.Helper()
	if code, out := e2fsck(t, img, "-fn"); code != 0 {
		t.Fatalf("e2fsck -fn: exit %d\n%s", code, out)
	}
}

func imageSum(t *testing.T, img string) [32]byte {
	b, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// kernelSees checks that the kernel reads name in img as want (skipping
// with the reason when it cannot mount).
func kernelSees(t *testing.T, img, fstype string, files map[string][]byte) {
	t.Helper()
	dir, unmount, why := kernelMount(t, img, fstype)
	if why != "" {
		t.Logf("kernel check skipped: %s", why)
		return
	}
	defer unmount()
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("kernel: %v", err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("kernel: %s differs (%d bytes, want %d)", name, len(got), len(want))
		}
	}
}

// treeDepth is the depth of a file's extent tree (from i_block).
func treeDepth(t *testing.T, w *Writer, name string) int {
	in, err := w.lookup("stat", name, false)
	if err != nil {
		t.Fatal(err)
	}
	return int(binary.LittleEndian.Uint16(in.block[6:]))
}

// TestWriterDeepMaps writes a file of many small pieces with holes between
// them, so that its map needs an extent tree of depth 2 (4K and 1K
// blocks) or triple indirect blocks (ext2), then shrinks it.
func TestWriterDeepMaps(t *testing.T) {
	for _, tc := range []struct {
		name, fstype string
		mkfs         []string
		pieces       int
		step         int64 // bytes between pieces
		wantDepth    int
	}{
		{"4k", "ext4", nil, 1500, 8192, 2},
		{"1k", "ext4", []string{"-b", "1024"}, 400, 2048, 2},
		{"ext2-1k", "ext2", []string{"-t", "ext2", "-b", "1024"}, 300, 300 * 1024, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := mkfsImage(t, 32<<20, "", tc.mkfs...)
			_, w := openImage(t, img)
			f, err := w.Create("holes")
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for i := 0; i < tc.pieces; i++ {
				piece := []byte(strings.Repeat(string(rune('a'+i%26)), 100))
				off := int64(i) * tc.step
				if _, err := f.WriteAt(piece, off); err != nil {
					t.Fatalf("piece %d: %v", i, err)
				}
				if end := int(off) + len(piece); end > len(want) {
					want = append(want, make([]byte, end-len(want))...)
				}
				copy(want[off:], piece)
			}
			if tc.wantDepth > 0 {
				if d := treeDepth(t, w, "holes"); d != tc.wantDepth {
					t.Fatalf("extent tree depth %d, want %d", d, tc.wantDepth)
				}
			}
			got, err := w.ReadFile("holes")
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read back: %v (equal %v)", err, bytes.Equal(got, want))
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			fsckClean(t, img)
			kernelSees(t, img, tc.fstype, map[string][]byte{"holes": want})

			// Shrink to a few pieces: the tree becomes shallower again.
			_, w = openImage(t, img)
			f, err = w.Create2("holes")
			if err != nil {
				t.Fatal(err)
			}
			keep := int64(3)*tc.step + 50
			if err := f.Truncate(keep); err != nil {
				t.Fatal(err)
			}
			if tc.wantDepth > 0 {
				if d := treeDepth(t, w, "holes"); d != 0 {
					t.Errorf("after truncate: depth %d, want 0", d)
				}
			}
			w.Close()
			fsckClean(t, img)
			kernelSees(t, img, tc.fstype, map[string][]byte{"holes": want[:keep]})
		})
	}
}

// TestWriterNameTooLong: a 255-byte name is stored, a 256-byte one is
// refused by every operation that makes a name, before anything is
// written (the image stays byte for byte the same).
func TestWriterNameTooLong(t *testing.T) {
	img := mkfsImage(t, 8<<20, "")
	_, w := openImage(t, img)
	long := strings.Repeat("é", 127) + "x" // 255 bytes
	if f, err := w.Create(long); err != nil {
		t.Fatalf("255-byte name: %v", err)
	} else {
		f.Write([]byte("ok"))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before := imageSum(t, img)
	_, w = openImage(t, img)
	tooLong := long + "y"
	for what, err := range map[string]error{
		"create":  func() error { _, err := w.Create(tooLong); return err }(),
		"mkdir":   w.Mkdir("/" + tooLong),
		"rename":  w.Rename(long, tooLong),
		"symlink": w.Symlink("target", tooLong),
		"link":    w.Link(long, tooLong),
	} {
		if !errors.Is(err, ErrNameTooLong) {
			t.Errorf("%s of a 256-byte name: %v, want ErrNameTooLong", what, err)
		}
	}
	if before != imageSum(t, img) {
		t.Error("the refused names changed the image")
	}
	w.Close()
	fsckClean(t, img)
	kernelSees(t, img, "ext4", map[string][]byte{long: []byte("ok")})
}

// TestWriterNoSpace: with a superblock free count that claims the whole
// filesystem is free, a write larger than the real free space is refused
// before any data is written; filling the filesystem to the last block
// leaves it consistent, and a removal gives the space back.
func TestWriterNoSpace(t *testing.T) {
	img := mkfsImage(t, 4<<20, "")
	// A stale superblock counter (what e2fsck -fn lets pass).
	dev, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	sb := make([]byte, 1024)
	dev.ReadAt(sb, 1024)
	le := binary.LittleEndian
	le.PutUint32(sb[0xC:], le.Uint32(sb[4:]))
	le.PutUint32(sb[sbChecksum:], superblockCsum(sb))
	dev.WriteAt(sb, 1024)
	dev.Close()

	_, w := openImage(t, img)
	free := w.Statfs().FreeBytes
	f, err := w.Create("big")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	before := imageSum(t, img)
	if _, err := f.Write(make([]byte, free+4096)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("write of %d bytes with %d free: %v, want ErrNoSpace", free+4096, free, err)
	}
	if before != imageSum(t, img) {
		t.Error("the refused write changed the image")
	}
	// Fill it up in pieces.
	var written []byte
	piece := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	for {
		if _, err := f.Write(piece); err != nil {
			if !errors.Is(err, ErrNoSpace) {
				t.Fatal(err)
			}
			break
		}
		written = append(written, piece...)
	}
	var small []string
	for i := 0; ; i++ {
		name := strings.Repeat("n", 200) + string(rune('A'+i%26)) + strings.Repeat("m", i/26)
		g, err := w.Create(name)
		if err != nil {
			if !errors.Is(err, ErrNoSpace) {
				t.Fatal(err)
			}
			break
		}
		if _, err := g.Write([]byte("x")); err != nil {
			if !errors.Is(err, ErrNoSpace) {
				t.Fatal(err)
			}
			w.Remove(name)
			break
		}
		small = append(small, name)
	}
	t.Logf("filled: %d bytes in big, %d small files, %d bytes free", len(written), len(small), w.Statfs().FreeBytes)
	if w.Statfs().FreeBytes >= int64(w.BlockSize()) && len(small) > 0 {
		t.Errorf("%d bytes still free after ENOSPC", w.Statfs().FreeBytes)
	}
	w.Close()
	fsckClean(t, img)
	kernelSees(t, img, "ext4", map[string][]byte{"big": written})

	_, w = openImage(t, img)
	if err := w.Remove("big"); err != nil {
		t.Fatal(err)
	}
	if got := w.Statfs().FreeBytes; got < int64(len(written)) {
		t.Errorf("after removing big: %d bytes free, want at least %d", got, len(written))
	}
	w.Close()
	fsckClean(t, img)
}

// TestWriterClearsEmptyRecovery: needs_recovery with an empty journal
// (the flag set by debugfs) is cleared by OpenWritable's replay, which has
// nothing to copy; e2fsck -fn is clean after.
func TestWriterClearsEmptyRecovery(t *testing.T) {
	img := mkfsImage(t, 16<<20, "")
	debugfs := needTool(t, "debugfs")
	if out, err := exec.Command(debugfs, "-w", "-R", "feature needs_recovery", img).CombinedOutput(); err != nil {
		t.Fatalf("debugfs: %v\n%s", err, out)
	}
	_, w := openImage(t, img)
	if w.incompat&incompatRecover != 0 {
		t.Fatal("needs_recovery still set")
	}
	if err := w.Mkdir("after"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fsckClean(t, img)
}

// TestWriterRemovedWhileOpen: a file removed (and its inode reused)
// while a WFile has it open is not written through that WFile.
func TestWriterRemovedWhileOpen(t *testing.T) {
	img := mkfsImage(t, 8<<20, "")
	_, w := openImage(t, img)
	f, err := w.Create("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("into a freed inode")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write after remove: %v, want ErrNotExist", err)
	}
	g, err := w.Create("b") // takes the same inode
	if err != nil {
		t.Fatal(err)
	}
	g.Write([]byte("b's"))
	if _, err := f.Write([]byte("into b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write through a stale file into a reused inode: %v, want ErrNotExist", err)
	}
	if err := f.Truncate(0); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("truncate after remove: %v", err)
	}
	w.Close()
	fsckClean(t, img)
	kernelSees(t, img, "ext4", map[string][]byte{"b": []byte("b's")})
}

// TestWriterHtreeDirectory: an indexed directory moved to another parent
// keeps its index (its '..' is in the htree root, whose checksum is the
// dx one), a name removed from it keeps it valid, and a name added drops
// the index; e2fsck -fn is clean after each, and the kernel sees the
// names.
func TestWriterHtreeDirectory(t *testing.T) {
	img := mkfsImage(t, 64<<20, csumSource(t))
	if code, out := e2fsck(t, img, "-fyD"); code > 1 {
		t.Fatalf("e2fsck -fyD: exit %d\n%s", code, out)
	}
	requireIndexed(t, img, "/many")
	indexed := func(w *Writer, p string) bool {
		in, err := w.lookup("stat", p, true)
		if err != nil {
			t.Fatal(err)
		}
		return in.flags&flagIndex != 0
	}
	_, w := openImage(t, img)
	if err := w.Rename("many", "d1/many"); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove("d1/many/" + manyName(5)); err != nil {
		t.Fatal(err)
	}
	if !indexed(w, "d1/many") {
		t.Fatal("the move or the removal dropped the index")
	}
	w.Close()
	fsckClean(t, img)
	_, w = openImage(t, img)
	f, err := w.Create("d1/many/new name")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("added"))
	if indexed(w, "d1/many") {
		t.Fatal("adding a name kept an index it does not update")
	}
	w.Close()
	fsckClean(t, img)
	kernelSees(t, img, "ext4", map[string][]byte{
		"d1/many/new name":       []byte("added"),
		"d1/many/" + manyName(6): []byte(manyName(6)),
	})
}
