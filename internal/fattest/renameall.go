package fattest

import (
	"bytes"
	"fmt"
	iofs "io/fs"
	"testing"
)

// CountingDev is a MemDev whose flushes (Sync) are counted.
type CountingDev struct {
	*MemDev
	Syncs int
}

func (d *CountingDev) Sync() error { d.Syncs++; return nil }

// RenameAller is what RenameAllCase needs of a filesystem: fat's and
// exfat's FS.
type RenameAller interface {
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	ReadFile(name string) ([]byte, error)
	RenameAll(pairs [][2]string) (int, error)
}

// RenameAllCase writes n files in dir under long temporary names (as put
// stages them), the first replace of them with an existing file at their
// destination, renames them all with one RenameAll and checks that each
// destination holds its new content and no temporary name is left. It
// returns the flushes the RenameAll cost.
func RenameAllCase(t *testing.T, fsys RenameAller, dev *CountingDev, dir string, n, replace int) int {
	t.Helper()
	var pairs [][2]string
	for i := 0; i < n; i++ {
		dest := fmt.Sprintf("%s/file%04d.txt", dir, i)
		if i < replace {
			MustWrite(t, fsys, dest, []byte("the old content"))
		}
		tmp := fmt.Sprintf("%s/.file%04d.txt.cryptvol-4242-123456789-0123456789abcdef.tmp", dir, i)
		MustWrite(t, fsys, tmp, Pattern(i, 100+i*7))
		pairs = append(pairs, [2]string{tmp, dest})
	}
	before := dev.Syncs
	done, err := fsys.RenameAll(pairs)
	if err != nil || done != n {
		t.Fatalf("RenameAll of %d: %d done, %v", n, done, err)
	}
	flushes := dev.Syncs - before
	for i, p := range pairs {
		if got := MustRead(t, fsys, p[1]); !bytes.Equal(got, Pattern(i, 100+i*7)) {
			t.Fatalf("%s: %d bytes, not what was renamed onto it", p[1], len(got))
		}
		if _, err := fsys.ReadFile(p[0]); err == nil {
			t.Fatalf("%s is still there after RenameAll", p[0])
		}
	}
	return flushes
}
