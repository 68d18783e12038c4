//go:build linux

package fstree

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MakeExFAT formats img (size bytes) with mkfs.exfat and fills it with
// the tree src through exfat-fuse (cp -r keeping times), the field's own
// driver. exfat-fuse needs root here (as a user it asks for allow_other,
// as root for a block device: a loop device is attached); it skips
// without.
func MakeExFAT(t T, img, src string, size int64) {
	t.Helper()
	needTool(t, "mkfs.exfat")
	f, err := os.Create(img)
	if err != nil {
		t.Fatalf("%v", err)
	}
	f.Truncate(size)
	f.Close()
	run(t, "mkfs.exfat", "-L", "ExVol", img)
	mnt, unmount := ExFATFuse(t, img, false)
	run(t, "cp", "-r", "--preserve=timestamps", src+"/.", mnt+"/")
	unmount()
}

// ExFATFuse mounts img with exfat-fuse on a loop device (read-only if
// asked) and returns the mount point and the function that unmounts it
// (exfat-fuse has written everything when umount of a fuseblk mount
// returns) and detaches the loop device.
func ExFATFuse(t T, img string, readOnly bool) (string, func()) {
	t.Helper()
	needTool(t, "mount.exfat-fuse", "losetup")
	if os.Geteuid() != 0 {
		t.Skipf("exfat-fuse needs root here (as a user it asks for allow_other, as root for a loop device)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: exfat-fuse cannot mount")
	}
	loop := strings.TrimSpace(run(t, "losetup", "-f", "--show", img))
	mnt := filepath.Join(t.TempDir(), "exfat-mnt")
	os.Mkdir(mnt, 0o755)
	args := []string{loop, mnt}
	if readOnly {
		args = []string{"-o", "ro", loop, mnt}
	}
	if out, err := exec.Command("mount.exfat-fuse", args...).CombinedOutput(); err != nil {
		exec.Command("losetup", "-d", loop).Run()
		t.Fatalf("mount.exfat-fuse %s: %v\n%s", img, err, out)
	}
	done := false
	unmount := func() {
		if done {
			return
		}
		done = true
		out, err := exec.Command("umount", mnt).CombinedOutput()
		exec.Command("losetup", "-d", loop).Run()
		if err != nil {
			t.Fatalf("umount %s: %v\n%s", mnt, err, out)
		}
	}
	t.Cleanup(unmount)
	return mnt, unmount
}
