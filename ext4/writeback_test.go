package ext4

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// hintDevice is an image file that records the writeback hints it gets.
type hintDevice struct {
	*os.File
	hints [][2]int64 // offset, length
}

func (d *hintDevice) StartWriteback(off, n int64) error {
	d.hints = append(d.hints, [2]int64{off, n})
	return nil
}

// TestWritebackHints writes a 40 MiB file in 1 MiB pieces and small files
// on a device that takes writeback hints: every hint lies inside the large
// file's data blocks (never on metadata, nothing twice), they cover all of
// it but the last writebackStep, the small files get none, and the
// filesystem is clean with the data intact.
func TestWritebackHints(t *testing.T) {
	img := filepath.Join(t.TempDir(), "fs.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	const size = 128 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := Format(f, size, FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	dev := &hintDevice{File: f}
	defer f.Close()
	w, err := OpenWritable(dev, size)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		small, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		small.Write(bytes.Repeat([]byte(name), 9000))
		small.Close()
	}
	if len(dev.hints) != 0 {
		t.Fatalf("small files got hints: %v", dev.hints)
	}
	data := make([]byte, 40<<20)
	rand.New(rand.NewSource(1)).Read(data)
	big, err := w.Create("big")
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := big.Write(data[off : off+1<<20]); err != nil {
			t.Fatal(err)
		}
	}
	big.Close()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := OpenWritable(f, size)
	if err != nil {
		t.Fatal(err)
	}
	in, err := r.lookup("stat", "big", false)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.m.readRawInode(in.ino)
	if err != nil {
		t.Fatal(err)
	}
	fm, err := r.loadMap(in.ino, rec)
	if err != nil {
		t.Fatal(err)
	}
	bs := r.blockSize
	covered := map[int64]int{} // file data block -> hints over it
	for _, h := range dev.hints {
		if h[0]%bs != 0 || h[1]%bs != 0 || h[1] > writebackStep+(1<<20) {
			t.Errorf("hint %v: not whole blocks, or larger than a step and a write", h)
		}
		for b := h[0] / bs; b < (h[0]+h[1])/bs; b++ {
			covered[b]++
		}
	}
	var dataBlocks int64
	for _, run := range fm.runs {
		for b := int64(run.phys); b < int64(run.phys+run.length); b++ {
			dataBlocks++
			if n := covered[b]; n > 1 {
				t.Errorf("data block %d hinted %d times", b, n)
			}
			delete(covered, b)
		}
	}
	if len(covered) != 0 {
		t.Errorf("%d hinted blocks are not the file's data", len(covered))
	}
	var hinted int64
	for _, h := range dev.hints {
		hinted += h[1]
	}
	if left := dataBlocks*bs - hinted; left < 0 || left > writebackStep {
		t.Errorf("%d of %d data bytes were not hinted (at most %d may be left to the sync)", left, dataBlocks*bs, writebackStep)
	}
	t.Logf("%d hints over %d of %d bytes", len(dev.hints), hinted, dataBlocks*bs)
	got := make([]byte, len(data))
	if err := r.readData(in, nil, got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("the file reads back different")
	}
	r.Close()
	fsckClean(t, img)
}
