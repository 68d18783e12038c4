package mount

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindDriverUnknownType(t *testing.T) {
	if _, err := FindDriver("btrfs"); !errors.Is(err, ErrNoDriver) {
		t.Errorf("FindDriver(btrfs) = %v, want ErrNoDriver", err)
	}
	if DriverName("vfat") != "" || DriverName("ext3") != "fuse2fs" || DriverName("ntfs") != "ntfs-3g" {
		t.Errorf("DriverName: vfat %q ext3 %q ntfs %q", DriverName("vfat"), DriverName("ext3"), DriverName("ntfs"))
	}
}

// TestFindDriverMissingNamesPackage hides the drivers from PATH: the error
// names the Debian package (unless the driver sits in an sbin directory,
// which FindDriver also searches).
func TestFindDriverMissingNamesPackage(t *testing.T) {
	for _, c := range []struct{ fstype, bin string }{{"ext4", "fuse2fs"}, {"ntfs", "ntfs-3g"}} {
		if _, err := os.Stat("/usr/sbin/" + c.bin); err == nil {
			continue
		}
		if _, err := os.Stat("/sbin/" + c.bin); err == nil {
			continue
		}
		t.Setenv("PATH", t.TempDir())
		_, err := FindDriver(c.fstype)
		if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "install the "+c.bin+" package") {
			t.Errorf("FindDriver(%s) without it on PATH: %v", c.fstype, err)
		}
	}
}

// TestStartDriverFails runs fuse2fs on a file that holds no ext
// filesystem: StartDriver returns the driver's own words, leaves nothing
// mounted and no process behind.
func TestStartDriverFails(t *testing.T) {
	if _, err := exec.LookPath("fuse2fs"); err != nil {
		t.Skip("fuse2fs not installed (apt-get install fuse2fs)")
	}
	if err := Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "zeros.img")
	if err := os.WriteFile(img, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o700)
	d, err := StartDriver("ext4", img, mnt, DriverOptions{})
	if err == nil {
		d.Unmount(false, 0)
		t.Fatal("fuse2fs mounted a file of zeros")
	}
	if !strings.Contains(err.Error(), "fuse2fs could not mount") {
		t.Errorf("error %q does not say fuse2fs failed", err)
	}
	if _, ok := IsMountPoint(mnt); ok {
		t.Error("left mounted")
	}
}

// TestStartDriverRoundTrip mounts an ext4 image made by mkfs.ext4 with
// fuse2fs, writes a file, unmounts (waiting for fuse2fs to exit) and has
// e2fsck -fn check the image.
func TestStartDriverRoundTrip(t *testing.T) {
	for _, tool := range []string{"fuse2fs", "mkfs.ext4", "e2fsck", "debugfs"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (e2fsprogs, fuse2fs)", tool)
		}
	}
	if err := Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	dir := t.TempDir()
	img := filepath.Join(dir, "e.img")
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", img, "8M").CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o700)
	d, err := StartDriver("ext4", img, mnt, DriverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	werr := os.WriteFile(filepath.Join(mnt, "hello.txt"), []byte("through fuse2fs\n"), 0o644)
	if err := d.Unmount(false, 60e9); err != nil {
		t.Fatal(err)
	}
	if werr != nil {
		t.Fatal(werr)
	}
	select {
	case <-d.Done():
	default:
		t.Error("Unmount returned before fuse2fs exited")
	}
	if out, err := exec.Command("e2fsck", "-fn", img).CombinedOutput(); err != nil {
		t.Errorf("e2fsck -fn: %v\n%s", err, out)
	}
	out, err := exec.Command("debugfs", "-R", "cat /hello.txt", img).Output()
	if err != nil || string(out) != "through fuse2fs\n" {
		t.Errorf("debugfs cat: %q, %v", out, err)
	}
}
