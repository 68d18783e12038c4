package fat

import (
	"testing"

	"github.com/cryptvol/cryptvol/internal/fattest"
)

// TestRenameAll renames 300 staged files (100 of them over existing
// files) in one call for a handful of flushes, where Rename one by one
// costs two each; the volume then checks clean here and with fsck.fat.
func TestRenameAll(t *testing.T) {
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			n := 300
			if c.typ == FAT12 {
				n = 60 // a 1 MiB volume
			}
			dev := &fattest.CountingDev{MemDev: newMemDev(t, c.size)}
			mustFormat(t, dev, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs, err := OpenWithOptions(dev, c.size, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if err := fs.Mkdir("/batch"); err != nil {
				t.Fatal(err)
			}
			flushes := fattest.RenameAllCase(t, fs, dev, "/batch", n, n/3)
			one := fattest.RenameAllCase(t, fs, dev, "", 1, 0)
			t.Logf("RenameAll of %d files: %d flushes; of one file: %d", n, flushes, one)
			if flushes > 2*one+2 {
				t.Errorf("RenameAll of %d files cost %d flushes, of one %d: the flushes are not shared", n, flushes, one)
			}
			// The same files one by one, for comparison: the harness
			// counts what it says.
			before := dev.Syncs
			for i := 0; i < 20; i++ {
				tmp := "/batch/.one-by-one-" + string(rune('a'+i)) + ".cryptvol-4242-123456789-0123456789abcdef.tmp"
				mustWrite(t, fs, tmp, pattern(i, 300))
				if err := fs.Rename(tmp, "/batch/one"+string(rune('a'+i))+".txt"); err != nil {
					t.Fatal(err)
				}
			}
			if got := dev.Syncs - before; got < 20 {
				t.Errorf("20 renames one by one cost %d flushes: the count is wrong", got)
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fs = mustOpen(t, dev, c.size)
			if r, err := fs.Check(false); err != nil || !r.Clean() {
				t.Fatalf("check after RenameAll: %v\n%v", err, r)
			}
			fs.Close()
			needTools(t, "fsck.fat")
			fsckClean(t, saveImage(t, dev.MemDev))
		})
	}
}
