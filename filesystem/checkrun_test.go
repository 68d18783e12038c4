package filesystem_test

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// newImage formats a filesystem of typ in a new image file of size bytes.
func newImage(t *testing.T, typ string, size int64) imageFile {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "img"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	img := imageFile{f, size}
	if typ != "" {
		if _, err := filesystem.Format(img, size, filesystem.FormatOptions{Type: typ}); err != nil {
			t.Fatal(err)
		}
	}
	return img
}

// TestCheckAndRepair: a new FAT32 and exFAT filesystem are clean; a lost
// cluster written into both FATs is found, repaired, and the repair's
// own fresh check (carried) is clean, as is a check after it; ext4 has no
// built-in checker, and zeros hold nothing to open.
func TestCheckAndRepair(t *testing.T) {
	for _, typ := range []struct{ format, probe string }{{"fat32", "vfat"}, {"exfat", "exfat"}} {
		img := newImage(t, typ.format, 40<<20)
		rep, after, _, err := filesystem.CheckAndRepair(typ.probe, img, img.size, filesystem.CheckOptions{})
		if err != nil || !rep.Clean() || after != nil {
			t.Fatalf("new %s: clean %v, after %v, %v", typ.format, rep != nil && rep.Clean(), after, err)
		}
	}

	img := newImage(t, "fat32", 40<<20)
	boot := make([]byte, 512)
	img.ReadAt(boot, 0)
	bps := int64(binary.LittleEndian.Uint16(boot[11:]))
	reserved := int64(binary.LittleEndian.Uint16(boot[14:]))
	fatSize := int64(binary.LittleEndian.Uint32(boot[36:])) * bps
	const lost = 1000 // a cluster no file uses
	eoc := binary.LittleEndian.AppendUint32(nil, 0x0FFFFFFF)
	for n := int64(0); n < int64(boot[16]); n++ { // each FAT copy
		if _, err := img.WriteAt(eoc, reserved*bps+n*fatSize+lost*4); err != nil {
			t.Fatal(err)
		}
	}
	dirty := false
	rep, after, _, err := filesystem.CheckAndRepair("vfat", img, img.size, filesystem.CheckOptions{Dirty: func() { dirty = true }})
	if err != nil || rep.Clean() || after != nil {
		t.Fatalf("lost cluster: clean %v, after %v, %v", rep != nil && rep.Clean(), after, err)
	}
	if dirty {
		t.Error("a cleanly formatted FAT reported dirty")
	}
	rep, after, carried, err := filesystem.CheckAndRepair("vfat", img, img.size, filesystem.CheckOptions{Repair: true})
	if err != nil || rep.Clean() || !carried || after == nil || !after.Clean() {
		t.Fatalf("repair: found %v, carried %v, after %v, %v", rep != nil && !rep.Clean(), carried, after, err)
	}
	if rep, _, _, err := filesystem.CheckAndRepair("vfat", img, img.size, filesystem.CheckOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("after the repair: %v, %v", rep, err)
	}

	ext := newImage(t, "ext4", 8<<20)
	if _, _, _, err := filesystem.CheckAndRepair("ext4", ext, ext.size, filesystem.CheckOptions{}); !errors.Is(err, filesystem.ErrNoChecker) {
		t.Fatalf("ext4: %v, want ErrNoChecker", err)
	}
	zeros := newImage(t, "", 8<<20)
	var oe *filesystem.CheckOpenError
	if _, _, _, err := filesystem.CheckAndRepair("vfat", zeros, zeros.size, filesystem.CheckOptions{}); !errors.As(err, &oe) {
		t.Fatalf("zeros: %v, want a CheckOpenError", err)
	}
}
