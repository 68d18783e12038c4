package filesystem_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// TestFindTailRoom: a new FAT filesystem's free tail starts after its
// tables and root and runs to the end; a file written at its end moves
// the start there; an image of zeros holds no filesystem.
func TestFindTailRoom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "img")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 8 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if _, err := filesystem.FindTailRoom(f, size); !errors.Is(err, filesystem.ErrUnknown) {
		t.Fatalf("zeros: %v, want ErrUnknown", err)
	}
	img := imageFile{f, size}
	if _, err := filesystem.Format(img, size, filesystem.FormatOptions{Type: "fat"}); err != nil {
		t.Fatal(err)
	}
	empty, err := filesystem.FindTailRoom(f, size)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Type != "vfat" || empty.Start <= 0 || empty.Start > size/8 || empty.End != size {
		t.Fatalf("new FAT: %+v", empty)
	}

	fsys, err := filesystem.Open(img, size, filesystem.Options{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	w, err := fsys.(filesystem.Writer).Create("/big")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(make([]byte, 3<<20)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	used, err := filesystem.FindTailRoom(f, size)
	if err != nil {
		t.Fatal(err)
	}
	if used.Start < empty.Start+3<<20 || used.End != size {
		t.Fatalf("after a 3 MiB file: %+v (empty: %+v)", used, empty)
	}

	for _, c := range []struct {
		start, end int64
		fits       bool
		largest    int64
	}{
		{used.Start, size, true, size - used.Start},
		{size - 1<<20, size, true, 1 << 20},
		{used.Start - 512, size - 512, false, size - 512 - used.Start},
		{used.Start, size + 512, false, 0},
		{0, used.Start - 512, false, 0},
	} {
		fits, largest := used.Fit(c.start, c.end)
		if fits != c.fits || largest != c.largest {
			t.Errorf("Fit(%d, %d) = %v, %d; want %v, %d", c.start, c.end, fits, largest, c.fits, c.largest)
		}
	}
}
