package fat

import (
	"bytes"
	"testing"
)

// TestUsedEnd checks that UsedEnd covers every cluster a file occupies and
// nothing beyond the last one.
func TestUsedEnd(t *testing.T) {
	const size = 10 << 20
	dev := newMemDev(t, size)
	if err := Format(dev, size, FormatOptions{}); err != nil {
		t.Fatal(err)
	}
	fs, err := Open(dev, size)
	if err != nil {
		t.Fatal(err)
	}
	empty := fs.UsedEnd()
	if empty != fs.g.clusterOffset(2) && fs.g.typ != FAT32 {
		t.Fatalf("empty FAT12/16 volume: UsedEnd %d, first cluster at %d", empty, fs.g.clusterOffset(2))
	}
	data := bytes.Repeat([]byte("x"), 3*fs.ClusterSize()+1)
	if err := fs.WriteFile("/a.bin", data, 0o644); err != nil {
		t.Fatal(err)
	}
	end := fs.UsedEnd()
	if want := empty + 4*int64(fs.ClusterSize()); end != want {
		t.Fatalf("after a 4-cluster file UsedEnd is %d, want %d", end, want)
	}
	if err := fs.Remove("/a.bin"); err != nil {
		t.Fatal(err)
	}
	if got := fs.UsedEnd(); got != empty {
		t.Fatalf("after removing it UsedEnd is %d, want %d", got, empty)
	}
}
