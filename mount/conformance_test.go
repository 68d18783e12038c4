//go:build linux || darwin

package mount

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/conformance"
)

// imageVolume serves an image file as a mount's Volume.
type imageVolume struct {
	*os.File
	size int64
}

func (v imageVolume) Size() int64 { return v.size }

// mountImage mounts img with MountFiles and returns the mount point; the
// mount is gone (and the file closed) after unmount or, whatever
// happens, after the test.
func mountImage(t *testing.T, img string, readOnly bool) (string, func() error) {
	t.Helper()
	f, err := os.OpenFile(img, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	dir := mountDir(t)
	m, err := MountFiles(dir, imageVolume{f, fi.Size()}, Options{FsName: "conformance", ReadOnly: readOnly})
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	done := false
	unmount := func() error {
		if done {
			return nil
		}
		done = true
		err := m.Unmount()
		f.Close()
		return err
	}
	t.Cleanup(func() { unmount() })
	return dir, unmount
}

// TestFilesMountConformance runs filesystem/conformance through the
// files mount: testing/fstest.TestFS on os.DirFS of the mount point, and
// the write-semantics suite with os calls, on FAT12/16/32 and exFAT
// images made by mkfs; after each case the image is checked by the
// filesystem's own Check and by fsck.vfat -n / fsck.exfat -n.
func TestFilesMountConformance(t *testing.T) {
	needFUSE(t)
	for _, c := range []struct {
		name, typ string
		image     func(t *testing.T, tree map[string]string) string
		fsck      []string
	}{
		{"FAT12", "vfat", func(t *testing.T, tree map[string]string) string { return conformance.FATImage(t, "12", 2<<20, tree) }, []string{"fsck.vfat", "-n"}},
		{"FAT16", "vfat", func(t *testing.T, tree map[string]string) string { return conformance.FATImage(t, "16", 9<<20, tree) }, []string{"fsck.vfat", "-n"}},
		{"FAT32", "vfat", func(t *testing.T, tree map[string]string) string { return conformance.FATImage(t, "32", 34<<20, tree) }, []string{"fsck.vfat", "-n"}},
		{"exFAT", "exfat", func(t *testing.T, tree map[string]string) string { return conformance.ExFATImage(t, 4<<20, tree) }, []string{"fsck.exfat", "-n"}},
	} {
		t.Run(c.name+"/reads", func(t *testing.T) {
			tree := conformance.ReadTree()
			if c.typ == "vfat" {
				tree = conformance.WithoutNonBMP(tree) // mtools drops them
			}
			dir, unmount := mountImage(t, c.image(t, tree), true)
			conformance.TestReadsIOFS(t, os.DirFS(dir), tree)
			if err := unmount(); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(c.name+"/writes", func(t *testing.T) {
			conformance.NeedTool(t, c.fsck[0])
			res := 2 * time.Second
			if c.typ == "exfat" {
				res = 10 * time.Millisecond
			}
			conformance.TestWrites(t, conformance.Target{
				New: func(t *testing.T) conformance.Device {
					img := c.image(t, nil)
					return conformance.Device{
						Open: func(t *testing.T) filesystem.Writer {
							dir, unmount := mountImage(t, img, false)
							return conformance.DirWriter(dir, c.typ, unmount)
						},
						Check: func(t *testing.T) {
							t.Helper()
							fsys := conformance.OpenImage(t, img, false)
							rep, err := fsys.(filesystem.Checker).Check(false)
							if err != nil || !rep.Clean() {
								t.Errorf("Check after unmounting: %v\n%v", err, rep)
							}
							fsys.Close()
							if out, err := exec.Command(c.fsck[0], append(c.fsck[1:], img)...).CombinedOutput(); err != nil {
								t.Errorf("%s: %v\n%s", strings.Join(c.fsck, " "), err, out)
							}
						},
					}
				},
				TimeResolution: res, CaseInsensitive: true,
			})
		})
	}
}
