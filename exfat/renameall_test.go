package exfat

import (
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// TestRenameAll renames 300 staged files (100 of them over existing
// files) in one call for two flushes whatever their number; the
// volume then checks clean here and with fsck.exfat.
func TestRenameAll(t *testing.T) {
	const size = 32 << 20
	dev := &fattest.CountingDev{MemDev: newMemDev(t, size)}
	mustFormat(t, dev, size, FormatOptions{})
	fs, err := OpenWithOptions(dev, size, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Mkdir("/batch"); err != nil {
		t.Fatal(err)
	}
	// The first replacing rename of a session walks the tree for
	// cross-links, after a sync (two flushes, once).
	first := fattest.RenameAllCase(t, fs, dev, "", 1, 1)
	flushes := fattest.RenameAllCase(t, fs, dev, "/batch", 300, 100)
	t.Logf("RenameAll of 300 files (100 replacing others): %d flushes (the session's first, of one file: %d)", flushes, first)
	if flushes > 2 {
		t.Errorf("RenameAll of 300 files cost %d flushes: the flushes are not shared", flushes)
	}
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	fs = mustOpen(t, dev, size)
	if r, err := fs.Check(false); err != nil || !r.Clean() {
		t.Fatalf("check after RenameAll: %v\n%v", err, r)
	}
	fs.Close()
	needTools(t, "fsck.exfat")
	fsckClean(t, saveImage(t, dev.MemDev))
}
