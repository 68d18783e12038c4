package filesystem_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
)

// imageFile is a filesystem image in a file, as a FormatTarget.
type imageFile struct {
	*os.File
	size int64
}

func (f imageFile) Size() int64     { return f.size }
func (f imageFile) SectorSize() int { return 512 }

// TestEraseSignatures: after it no filesystem Format made is recognised,
// and the middle of the image is left as it was.
func TestEraseSignatures(t *testing.T) {
	for _, typ := range []string{"fat", "exfat", "ext4"} {
		t.Run(typ, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "img"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			const size = 8 << 20
			if err := f.Truncate(size); err != nil {
				t.Fatal(err)
			}
			img := imageFile{f, size}
			if _, err := filesystem.Format(img, size, filesystem.FormatOptions{Type: typ}); err != nil {
				t.Fatal(err)
			}
			if _, err := fsprobe.Probe(img); err != nil {
				t.Fatalf("not recognised after Format: %v", err)
			}
			mark := []byte("the middle stays")
			if _, err := f.WriteAt(mark, size/2); err != nil {
				t.Fatal(err)
			}
			if err := filesystem.EraseSignatures(img); err != nil {
				t.Fatal(err)
			}
			if r, err := fsprobe.Probe(img); err == nil {
				t.Fatalf("still recognised as %s", r.Type)
			}
			got := make([]byte, len(mark))
			if _, err := f.ReadAt(got, size/2); err != nil || string(got) != string(mark) {
				t.Fatalf("the middle reads %q, %v", got, err)
			}
		})
	}
}
