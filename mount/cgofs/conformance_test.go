//go:build linux && cgofuse

package cgofs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/conformance"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/mount/cgofs"
)

// mountImage opens img (writable unless readOnly) through the filesystem
// layer and mounts it through the cgofuse adapter and libfuse; the mount
// is gone after unmount or, whatever happens, after the test.
func mountImage(t *testing.T, img string, readOnly bool) (string, func() error) {
	t.Helper()
	if err := cgofs.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(img, flag, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	fsys, err := filesystem.Open(f, fi.Size(), filesystem.Options{Writable: !readOnly})
	if err != nil {
		f.Close()
		t.Fatalf("Open %s: %v", img, err)
	}
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := cgofs.Mount(dir, fsys, cgofs.Options{FsName: "conformance", ReadOnly: readOnly})
	if err != nil {
		fsys.Close()
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
		if _, ok := mount.IsMountPoint(dir); ok {
			t.Errorf("%s is still mounted after Unmount", dir)
		}
		return err
	}
	t.Cleanup(func() {
		unmount()
		if _, ok := mount.IsMountPoint(dir); ok {
			t.Logf("cleanup: %s was still mounted; detaching", dir)
			mount.Unmount(dir, true)
		}
	})
	return dir, unmount
}

// TestCgofuseConformance runs filesystem/conformance through the
// cgofuse adapter, the WinFsp front end's file-system object, mounted by
// libfuse: testing/fstest.TestFS on os.DirFS of the mount point, and the
// write-semantics suite with os calls, on FAT12/16/32, exFAT and ext4
// images made by mkfs; after each write case the image is checked by the
// filesystem's own Check and by fsck.vfat -n, fsck.exfat -n or
// e2fsck -fn. These are the suites the go-fuse mount runs
// (mount.TestFilesMountConformance), ext4 besides.
func TestCgofuseConformance(t *testing.T) {
	for _, c := range []struct {
		name, typ string
		image     func(t *testing.T, tree map[string]string) string
		fsck      []string
		tg        conformance.Target
	}{
		{"FAT12", "vfat", func(t *testing.T, tree map[string]string) string { return conformance.FATImage(t, "12", 2<<20, tree) }, []string{"fsck.vfat", "-n"},
			conformance.Target{TimeResolution: 2 * time.Second, CaseInsensitive: true}},
		{"FAT16", "vfat", func(t *testing.T, tree map[string]string) string { return conformance.FATImage(t, "16", 9<<20, tree) }, []string{"fsck.vfat", "-n"},
			conformance.Target{TimeResolution: 2 * time.Second, CaseInsensitive: true}},
		{"FAT32", "vfat", func(t *testing.T, tree map[string]string) string { return conformance.FATImage(t, "32", 34<<20, tree) }, []string{"fsck.vfat", "-n"},
			conformance.Target{TimeResolution: 2 * time.Second, CaseInsensitive: true}},
		{"exFAT", "exfat", func(t *testing.T, tree map[string]string) string { return conformance.ExFATImage(t, 4<<20, tree) }, []string{"fsck.exfat", "-n"},
			conformance.Target{TimeResolution: 10 * time.Millisecond, CaseInsensitive: true}},
		{"ext4", "ext4", func(t *testing.T, tree map[string]string) string { return conformance.Ext4Image(t, 8<<20, tree, false) }, []string{"e2fsck", "-fn"},
			conformance.Target{TimeResolution: time.Nanosecond, NameBytes: true}},
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
			tg := c.tg
			tg.New = func(t *testing.T) conformance.Device {
				img := c.image(t, nil)
				return conformance.Device{
					Open: func(t *testing.T) filesystem.Writer {
						dir, unmount := mountImage(t, img, false)
						return conformance.DirWriter(dir, c.typ, unmount)
					},
					Check: func(t *testing.T) {
						t.Helper()
						fsys := conformance.OpenImage(t, img, false)
						if ch, ok := fsys.(filesystem.Checker); ok {
							rep, err := ch.Check(false)
							if err != nil || !rep.Clean() {
								t.Errorf("Check after unmounting: %v\n%v", err, rep)
							}
						}
						fsys.Close()
						if out, err := exec.Command(c.fsck[0], append(c.fsck[1:], img)...).CombinedOutput(); err != nil {
							t.Errorf("%s: %v\n%s", strings.Join(c.fsck, " "), err, out)
						}
					},
				}
			}
			conformance.TestWrites(t, tg)
		})
	}
}
