package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cryptvol/cryptvol/mount"
)

// rootlessUID is the unprivileged user the rootless test runs as: nobody.
const rootlessUID = 65534

// TestMountRootless runs the mount scripts that need no root
// (mount_files: ordinary file operations on a mounted FAT volume, checked
// with ls/get and fsck.fat afterwards; mount_raw: the same through --raw
// and mtools) as an unprivileged user, mounting through the setuid
// fusermount3 the way users do. As root (CI is) it runs this test binary
// again as nobody; as anyone else TestMountScripts is rootless already.
func TestMountRootless(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestMountScripts itself runs without root here")
	}
	if err := mount.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if st, err := os.Stat("/dev/fuse"); err == nil && st.Mode().Perm()&0o006 != 0o006 {
		// fusermount3 opens the device with the user's permissions.
		t.Skipf("skipping: /dev/fuse is %v, so no user can mount on this machine (udev makes it 0666 on a standard system; .ci/run does the same)", st.Mode().Perm())
	}
	fm, err := exec.LookPath("fusermount3")
	if err != nil {
		t.Skip("skipping: fusermount3 is not installed (apt-get install fuse3)")
	}
	if st, err := os.Stat(fm); err != nil || st.Mode()&os.ModeSetuid == 0 {
		t.Skipf("skipping: %s is not setuid root, so no user can mount", fm)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The go-build directory holding this binary is private to root, and
	// so is t.TempDir's parent: the child runs a copy in a directory of
	// its own that it can reach.
	dir, err := os.MkdirTemp("", "cryptvol-rootless-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "cryptvol.test")
	if err := copyFile(self, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, rootlessUID, rootlessUID); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestMountScripts$/^(mount_files|mount_raw)$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp, "XDG_RUNTIME_DIR=", "XDG_CACHE_HOME="+tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: rootlessUID, Gid: rootlessUID}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", rootlessUID, out)
	if err != nil {
		t.Fatalf("the mount scripts failed without root: %v", err)
	}
	// A child that skipped would also exit 0: both scripts must have run.
	for _, name := range []string{"mount_files", "mount_raw"} {
		if !strings.Contains(string(out), "--- PASS: TestMountScripts/"+name+" ") {
			t.Errorf("%s did not run and pass without root", name)
		}
	}
}

func copyFile(from, to string, mode os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
