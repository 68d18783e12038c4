package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/mount"
)

// rootlessUID is the unprivileged user the rootless test runs as: nobody.
const rootlessUID = 65534

// TestMountRootless runs the mount scripts that need no root
// (mount_files: ordinary file operations on a mounted FAT volume, checked
// with ls/get and fsck.fat afterwards; mount_raw: the same through --raw
// and mtools; mount_exfat: an exFAT volume served by package exfat;
// mount_ext4 and mount_ntfs: an ext4 LUKS2 and an NTFS
// VeraCrypt volume mounted through fuse2fs and ntfs-3g, written, then
// checked by e2fsck -fn and ntfsfix -n; mount_fs_write: put/rm/mkdir/mv
// on ext4, NTFS and exFAT) as an unprivileged user, mounting through the setuid
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
	// The child's scripts need the corpus; without it they would skip and
	// this test could only report that they did not run.
	corpus := testdata.Require(t)
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
	scripts := []string{"mount_files", "mount_exfat"}
	// Scripts that need a tool run where it is installed (a script that
	// skips in the child would fail the check below): mount_raw checks
	// the raw file with mtools; ext4 (LUKS2) and NTFS (VeraCrypt) are
	// mounted and written through fuse2fs and ntfs-3g.
	for _, s := range []struct{ name, tool string }{
		{"mount_raw", "mcopy"}, {"mount_ext4", "fuse2fs"}, {"mount_ntfs", "ntfs-3g"}, {"mount_fs_write", "fuse2fs"},
	} {
		if _, err := exec.LookPath(s.tool); err == nil {
			scripts = append(scripts, s.name)
		} else {
			t.Logf("%s not installed: %s does not run without root", s.tool, s.name)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestMountScripts$/^("+strings.Join(scripts, "|")+")$", "-test.v")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp, "XDG_RUNTIME_DIR=", "XDG_CACHE_HOME="+tmp, "CRYPTVOL_TESTDATA="+corpus)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: rootlessUID, Gid: rootlessUID}}
	if c := allowRootNamespace(t, dir, cmd.Args); c != nil {
		c.Env = cmd.Env
		cmd = c
	}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", rootlessUID, out)
	if err != nil {
		t.Fatalf("the mount scripts failed without root: %v", err)
	}
	// A child that skipped would also exit 0: both scripts must have run.
	for _, name := range scripts {
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

// allowRootNamespace returns, when ntfs-3g is installed setuid root (as
// Debian users need it to mount) and /etc/fuse.conf lacks user_allow_other
// (which cryptvol then needs to let the setuid driver reach the raw file,
// see mount.DriverNeedsAllowRoot), a command that runs args as nobody in a
// private mount namespace where /etc/fuse.conf has that line: the system's
// own file is not touched. It returns nil when nothing needs changing or
// unshare/setpriv (util-linux) are missing.
func allowRootNamespace(t *testing.T, dir string, args []string) *exec.Cmd {
	nt, err := exec.LookPath("ntfs-3g")
	if err != nil {
		return nil
	}
	if st, err := os.Stat(nt); err != nil || st.Mode()&os.ModeSetuid == 0 {
		return nil
	}
	conf, _ := os.ReadFile("/etc/fuse.conf")
	for _, l := range strings.Split(string(conf), "\n") {
		if strings.TrimSpace(l) == "user_allow_other" {
			return nil
		}
	}
	for _, tool := range []string{"unshare", "setpriv", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Logf("%s is setuid root and /etc/fuse.conf lacks user_allow_other; without %s (util-linux) the NTFS scripts fail as nobody", nt, tool)
			return nil
		}
	}
	alt := filepath.Join(dir, "fuse.conf")
	if err := os.WriteFile(alt, append(conf, []byte("\nuser_allow_other\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s is setuid root: running as nobody with user_allow_other in /etc/fuse.conf (bind-mounted in a private mount namespace)", nt)
	script := `mount --bind "$0" /etc/fuse.conf && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"`
	return exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-c", script, alt}, args...)...)
}
