package main

import (
	"bytes"
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeWebDAVThroughDavfs2 mounts 'cryptvol serve --webdav' with
// davfs2, the kernel-side WebDAV client of Linux (through FUSE, as root),
// copies a tree in with cp -a, renames and removes through the mount,
// unmounts (davfs2 uploads what it cached and waits), stops the server
// and reads the volume back with cryptvol: the tree is what the shell
// commands made of it, and fsck is clean (issue 27, acceptance).
func TestServeWebDAVThroughDavfs2(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: mount.davfs mounts as root only here (run as root, as CI does)")
	}
	for _, tool := range []string{"mount.davfs", "umount.davfs", "fusermount3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s is not installed (Debian packages davfs2, fuse3)", tool)
		}
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	env, vol, creds := newServeVolume(t)
	s := startServe(t, env, vol, creds...)

	// davfs2 reads the credential from a secrets file (0600) named in its
	// own configuration file. buf_size 64 (KiB): with the default of 16
	// the kernels from 6.16 on refuse its directory reads (EINVAL; davfs2
	// issue #22 upstream).
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets")
	if err := os.WriteFile(secrets, []byte(s.URL+" "+s.User+" "+s.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "davfs2.conf")
	os.WriteFile(conf, []byte("secrets "+secrets+"\ndelay_upload 0\nbuf_size 64\nuse_locks 1\n"), 0o600)
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	if out, err := exec.Command("timeout", "60", "mount.davfs", "-o", "conf="+conf, s.URL, mnt).CombinedOutput(); err != nil {
		t.Fatalf("mount.davfs: %v\n%s", err, out)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			exec.Command("umount", "-l", mnt).Run()
		}
	})
	sh := func(script string) {
		t.Helper()
		cmd := exec.Command("sh", "-ec", script)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}

	// A tree with a Unicode name, an empty file, a file of several
	// megabytes and a deep directory.
	src := filepath.Join(dir, "src")
	files := map[string][]byte{
		"empty":                nil,
		"ünïcödé.txt":          []byte("hello davfs2\n"),
		"big.bin":              randomBytes(t, 5<<20+123),
		"deep/a/b/c/leaf.txt":  []byte("leaf\n"),
		"gone/one.txt":         []byte("removed through the mount\n"),
		"gone/two/three.bin":   randomBytes(t, 70000),
		"renamed/old-name.dat": randomBytes(t, 4096),
	}
	for name, data := range files {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh("cp -a src mnt/tree")
	sh("mv mnt/tree/renamed/old-name.dat mnt/tree/renamed/new-name.dat")
	sh("mv mnt/tree/deep mnt/tree/moved-deep")
	sh("rm -r mnt/tree/gone")
	// umount.davfs returns once davfs2 has uploaded its cache and exited.
	if out, err := exec.Command("timeout", "120", "umount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v\n%s", err, out)
	}
	mounted = false

	// The server stops on SIGTERM, as on Ctrl-C, and releases the volume.
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("serve did not exit within a minute of SIGTERM")
	}

	want := map[string][]byte{
		"empty":                     nil,
		"ünïcödé.txt":               files["ünïcödé.txt"],
		"big.bin":                   files["big.bin"],
		"moved-deep/a/b/c/leaf.txt": files["deep/a/b/c/leaf.txt"],
		"renamed/new-name.dat":      files["renamed/old-name.dat"],
	}
	got := filepath.Join(t.TempDir(), "got")
	cryptvolCmd(t, env, append([]string{"get", vol, "/tree", got, "-r"}, creds...)...)
	seen := map[string]bool{}
	filepath.Walk(got, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(got, p)
		seen[rel] = true
		data, _ := os.ReadFile(p)
		if w, ok := want[rel]; !ok {
			t.Errorf("%s is in the volume; it was removed or renamed through the mount", rel)
		} else if !bytes.Equal(data, w) {
			t.Errorf("%s: %d bytes differ from the %d copied in", rel, len(data), len(w))
		}
		return nil
	})
	for name := range want {
		if !seen[name] {
			t.Errorf("%s, copied in through davfs2, is not in the volume", name)
		}
	}
	if out := cryptvolCmd(t, env, append([]string{"fsck", vol}, creds...)...); strings.Contains(out, "error") {
		t.Errorf("fsck after the davfs2 session: %s", out)
	}
}

// TestServeRefusesAnotherUser: another uid on the machine (65534, nobody)
// gets nothing from 'cryptvol serve': every method is answered 401
// without the credential, and the credential is nowhere it can read —
// not in 'cryptvol list', not in the server's command line or
// environment, not in its runtime directory (issue 27, acceptance).
func TestServeRefusesAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipping: running a client as uid 65534 needs root")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("skipping: curl is not installed (Debian package curl)")
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	env, vol, creds := newServeVolume(t)
	s := startServe(t, env, vol, creds...)
	base := strings.TrimSuffix(s.URL, "/")
	asNobody := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(name, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
		return cmd
	}
	for _, req := range [][]string{
		{"-X", "GET", base + "/"},
		{"-X", "PROPFIND", "-H", "Depth: infinity", base + "/"},
		{"-X", "PUT", "--data-binary", "x", base + "/nobody.txt"},
		{"-X", "MKCOL", base + "/nobody"},
		{"-X", "DELETE", base + "/lost+found"},
		{"-X", "MOVE", "-H", "Destination: " + base + "/b", base + "/a"},
		{"-X", "COPY", "-H", "Destination: " + base + "/b", base + "/a"},
		{"-X", "LOCK", base + "/a"},
		{"-X", "OPTIONS", base + "/"},
		{"-X", "GET", "-u", "cryptvol:guess", base + "/"},
	} {
		out, _ := asNobody("curl", append([]string{"-s", "-o", "/dev/null", "-w", "%{http_code}"}, req...)...).Output()
		if string(out) != "401" {
			t.Errorf("uid 65534: curl %v: status %q, want 401", req, out)
		}
	}
	// Where the credential could leak to another user.
	out, _ := asNobody("cryptvol", "list", "--json").CombinedOutput()
	if strings.Contains(string(out), s.Password) {
		t.Errorf("'cryptvol list' as uid 65534 shows the password: %s", out)
	}
	for _, f := range []string{"cmdline", "environ"} {
		b, _ := asNobody("cat", filepath.Join("/proc", strconv.Itoa(s.PID), f)).Output()
		if bytes.Contains(b, []byte(s.Password)) {
			t.Errorf("uid 65534 reads the password in /proc/%d/%s", s.PID, f)
		}
	}
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "CRYPTVOL_RUNTIME_DIR="); ok {
			if out, err := asNobody("ls", dir).CombinedOutput(); err == nil {
				t.Errorf("uid 65534 lists the runtime directory %s: %s", dir, out)
			}
		}
	}
	// The server itself answers its own user with the credential.
	if got := curlStatus(t, "-X", "PROPFIND", "-H", "Depth: 0", "-u", s.User+":"+s.Password, base+"/"); got != "207" {
		t.Errorf("with the credential: status %s, want 207", got)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}
