package exfat

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"testing"
)

// crossLinked is newDamaged's volume where /ok.txt's entry claims the
// second cluster of /dir/contiguous.bin (a cross-link, as another
// system's crash or a bad repair leaves): fsck.exfat -n finds it.
func crossLinked(t *testing.T) *damaged {
	t.Helper()
	d := newDamaged(t)
	off, e, _ := d.entry(t, "/ok.txt")
	_, c, _ := d.entry(t, "/dir/contiguous.bin")
	binary.LittleEndian.PutUint32(d.m.Data[off+32+20:], c.start+1)
	set := d.m.Data[off : off+int64(e.nslots)*32]
	binary.LittleEndian.PutUint16(set[2:], entryChecksum(set))
	if _, err := exec.LookPath("fsck.exfat"); err == nil {
		img := saveImage(t, d.m)
		if out, err := exec.Command("fsck.exfat", "-n", img).CombinedOutput(); err == nil {
			t.Fatalf("fsck.exfat -n does not see the cross-link the test made:\n%s", out)
		}
	}
	return d
}

// TestCrossLinkGuard: on a volume with a cross-link, every change that
// would free clusters of one of the two files (remove, truncate, rename
// over it) is refused with ErrNeedsRepair (an ErrCorrupt), so the other
// file's data is never handed to a new allocation; as fat does. Each case
// then fills the volume and checks the other file is intact.
func TestCrossLinkGuard(t *testing.T) {
	want := pattern(1, 5000)
	for _, c := range []struct {
		name string
		do   func(fs *FS) error
	}{
		{"remove", func(fs *FS) error { return fs.Remove("/ok.txt") }},
		{"create-truncates", func(fs *FS) error {
			f, err := fs.Create("/ok.txt")
			if err == nil {
				f.Close()
			}
			return err
		}},
		{"truncate", func(fs *FS) error {
			f, err := fs.OpenFile("/ok.txt", os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(0)
		}},
		{"rename-over", func(fs *FS) error {
			mustWrite(t, fs, "/new.txt", []byte("replacement"))
			return fs.Rename("/new.txt", "/ok.txt")
		}},
		{"removeall", func(fs *FS) error { return fs.RemoveAll("/ok.txt") }},
		{"remove-the-other", func(fs *FS) error { return fs.Remove("/dir/contiguous.bin") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := crossLinked(t)
			fs := mustOpen(t, d.m, d.size)
			err := c.do(fs)
			if !errors.Is(err, ErrNeedsRepair) || !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s on a cross-linked volume: %v, want ErrNeedsRepair (wrapping ErrCorrupt)", c.name, err)
			}
			// Once known, every change is refused, as fat does.
			if err := fs.Mkdir("/after"); !errors.Is(err, ErrNeedsRepair) {
				t.Errorf("Mkdir after a refused %s: %v, want ErrNeedsRepair", c.name, err)
			}
			// Whatever was allowed, fill the free space in a new session
			// (a fill frees nothing, so it is not refused): a freed shared
			// cluster would now hold the filler.
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			fs = mustOpen(t, d.m, d.size)
			f, err := fs.Create("/filler")
			if err == nil {
				// A cluster at a time, so that the last free one is used.
				chunk := bytes.Repeat([]byte{0xEE}, fs.g.clusterSize)
				for i := int64(0); i < d.size/int64(len(chunk)); i++ {
					if _, err := f.Write(chunk); err != nil {
						if !errors.Is(err, ErrNoSpace) {
							t.Errorf("filling: %v", err)
						}
						break
					}
				}
				f.Close()
			} else {
				t.Errorf("filling: %v", err)
			}
			if c.name != "remove-the-other" {
				if got, err := fs.ReadFile("/dir/contiguous.bin"); err != nil || !bytes.Equal(got, want) {
					t.Errorf("after %s and a fill, /dir/contiguous.bin is damaged (%v)", c.name, err)
				}
			}
			r, err := fs.Check(false)
			if err != nil || len(r.CrossLinks) != 1 {
				t.Errorf("Check after %s: %v\n%s", c.name, err, r)
			}
			fs.Close()
		})
	}
}
