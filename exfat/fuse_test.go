package exfat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fuseMount mounts the image at img with exfat-fuse (mount.exfat-fuse, the
// second exFAT implementation these tests trust) and returns the mount
// point; the test's cleanup unmounts it. mount.exfat-fuse run as root
// mounts "fuseblk", which needs a block device, so the image is attached
// to a loop device first (detached again at cleanup). Skips, saying what
// was tried, when that cannot be done here.
func fuseMount(t *testing.T, img string, readOnly bool) string {
	t.Helper()
	needTools(t, "mount.exfat-fuse", "losetup")
	if os.Getuid() != 0 {
		t.Skip("exfat-fuse mounts need root here (mount.exfat-fuse as a user asks for allow_other, which /etc/fuse.conf does not allow, and as root it needs a loop device)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	out, err := exec.Command("losetup", "-f", "--show", img).CombinedOutput()
	if err != nil {
		t.Skipf("losetup -f --show %s: %v: %s (exfat-fuse needs a loop device when run as root)", img, err, out)
	}
	loop := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", loop).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v %s", loop, err, out)
		}
	})
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{loop, dir}
	if readOnly {
		args = []string{"-o", "ro", loop, dir}
	}
	if out, err := runTool(t, nil, "mount.exfat-fuse", args...); err != nil {
		t.Fatalf("mount.exfat-fuse %s: %v\n%s", img, err, out)
	}
	t.Cleanup(func() { fuseUnmount(t, dir) })
	return dir
}

// fuseUnmount unmounts dir (once; later calls do nothing). exfat-fuse has
// written everything back when umount of a fuseblk mount returns.
func fuseUnmount(t *testing.T, dir string) {
	t.Helper()
	mounts, _ := os.ReadFile("/proc/mounts")
	if !strings.Contains(string(mounts), " "+dir+" ") {
		return
	}
	if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
		t.Errorf("umount %s: %v %s", dir, err, out)
	}
}
