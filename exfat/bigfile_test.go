package exfat

import (
	"bytes"
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// bigPieces are the stretches of the 5 GiB file that hold data: its start,
// across the 4 GiB boundary (where a 32-bit size would wrap) and its end;
// everything else is zeros.
var bigPieces = []struct {
	off int64
	n   int
}{{0, 1 << 20}, {4<<30 - 300<<10, 1 << 20}, {5<<30 - 1<<20, 1 << 20}}

const bigSize = 5 << 30

// bigContent returns the bytes of the big file at off (len(p) of them).
func bigContent(p []byte, off int64) {
	clear(p)
	for i, pc := range bigPieces {
		lo, hi := max(off, pc.off), min(off+int64(len(p)), pc.off+int64(pc.n))
		if lo < hi {
			data := pattern(1000+i, pc.n)
			copy(p[lo-off:hi-off], data[lo-pc.off:hi-pc.off])
		}
	}
}

func bigDigest() [32]byte {
	h := sha256.New()
	buf := make([]byte, 4<<20)
	for off := int64(0); off < bigSize; off += int64(len(buf)) {
		bigContent(buf, off)
		h.Write(buf)
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// TestFileOver4GiB writes a 5 GiB file (data at its start, across 4 GiB
// and at its end, zeros between) on a 6 GiB volume kept sparse, reads it
// back after reopening, has fsck.exfat -n check the image and exfat-fuse
// read the file back: its size and the pieces, and with EXFAT_LONG=1 the
// SHA-256 of all 5 GiB.
func TestFileOver4GiB(t *testing.T) {
	const size = 6 << 30
	dev := newSparseDev(t, size)
	mustFormat(t, dev, size, FormatOptions{Label: "BIG"})
	fs := mustOpen(t, dev, size)
	f, err := fs.Create("/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	for i, pc := range bigPieces {
		if _, err := f.WriteAt(pattern(1000+i, pc.n), pc.off); err != nil {
			t.Fatalf("WriteAt %d: %v", pc.off, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, fs, "/after.txt", []byte("after the big one"))
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	fs = mustOpen(t, dev, size)
	fi, err := fs.Stat("/big.bin")
	if err != nil || fi.Size() != bigSize {
		t.Fatalf("size %v, %v", fi, err)
	}
	checkBig := func(what string, r io.ReaderAt) {
		t.Helper()
		got := make([]byte, 3<<20)
		want := make([]byte, len(got))
		for _, off := range []int64{0, 4<<30 - 1<<20, 5<<30 - 3<<20, 2 << 30} {
			if _, err := r.ReadAt(got, off); err != nil && err != io.EOF {
				t.Fatalf("%s: ReadAt %d: %v", what, off, err)
			}
			bigContent(want, off)
			if !bytes.Equal(got, want) {
				t.Errorf("%s: content at %d differs", what, off)
			}
		}
	}
	bf, err := fs.Open("/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	checkBig("read here", bf)
	bf.Close()
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Fatalf("Check: %v\n%s", err, r)
	}
	fs.Close()
	needTools(t, "fsck.exfat")
	img := dev.Save(t, "exfat.img")
	fsckClean(t, img)
	mnt := fuseMount(t, img, true)
	hf, err := os.Open(filepath.Join(mnt, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer hf.Close()
	if st, _ := hf.Stat(); st.Size() != bigSize {
		t.Fatalf("exfat-fuse sees %d bytes", st.Size())
	}
	checkBig("exfat-fuse", hf)
	if os.Getenv("EXFAT_LONG") == "" {
		t.Log("set EXFAT_LONG=1 to compare all 5 GiB through exfat-fuse (about a minute)")
		return
	}
	h := sha256.New()
	if _, err := io.Copy(h, hf); err != nil {
		t.Fatal(err)
	}
	if want := bigDigest(); !bytes.Equal(h.Sum(nil), want[:]) {
		t.Error("exfat-fuse reads a different 5 GiB")
	}
}
