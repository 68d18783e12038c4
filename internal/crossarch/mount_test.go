package crossarch

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestCrossArchMount mounts a FAT VeraCrypt volume with the linux/arm
// (GOARM=6, the Raspberry Pi 1 core) build of cryptvol under qemu-arm,
// writes files through the mount from the host, unmounts with the ARM
// build, and checks on the host that fsck.fat finds the filesystem clean
// and every file reads back. 32-bit Linux could not mount at all while
// go-fuse v2.12 did not build there.
//
// The mount runs with --foreground: the background daemon re-executes
// the binary, which qemu-user cannot follow unless binfmt_misc is set up
// for ARM (it is not on CI machines); a real Pi runs the daemon natively.
func TestCrossArchMount(t *testing.T) {
	if os.Getenv(enableEnv) != "1" {
		t.Skipf("set %s=1 to run (.ci/run does)", enableEnv)
	}
	if runtime.GOOS != "linux" {
		t.Skipf("qemu-user and FUSE: Linux hosts only, not %s", runtime.GOOS)
	}
	for _, tool := range []string{"go", "qemu-arm-static", "fusermount3", "fsck.fat"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (qemu-user-static, fuse3, dosfstools)", tool)
		}
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	dir := t.TempDir()
	host := buildCryptvol(t, dir, "cryptvol-host")
	arm := buildCryptvol(t, dir, "cryptvol-armv6", "GOARCH=arm", "GOARM=6")
	qemu := []string{"qemu-arm-static", "-cpu", "arm1176", arm}

	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("arm mount test password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vol := filepath.Join(dir, "v.hc")
	creds := []string{"--password-file", pw, "--hash", "SHA-512", "--pim", "1"}
	run(t, append([]string{host, "create", vol, "--size", "6M", "--non-interactive"}, creds...)...)

	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	args := append(append(append([]string(nil), qemu...), "mount", vol, mnt, "--foreground"), creds...)
	daemon := exec.Command(args[0], args[1:]...)
	var log bytes.Buffer
	daemon.Stdout, daemon.Stderr = &log, &log
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	defer func() {
		if isMounted(mnt) {
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
		select {
		case <-exited:
		default:
			daemon.Process.Kill()
			<-exited
		}
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for !isMounted(mnt) {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the ARM mount ended before mounting (%v):\n%s", err, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ARM mount did not appear within 2 minutes:\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	files := map[string][]byte{
		"/hello.txt":       []byte("written through a 32-bit ARM mount\n"),
		"/photos/big.bin":  random(t, 1<<20+123),
		"/photos/a/b/c.md": random(t, 5000),
	}
	for name, data := range files {
		p := filepath.Join(mnt, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		got, err := os.ReadFile(filepath.Join(mnt, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read back %s through the mount: %v (%d bytes, want %d)", name, err, len(got), len(data))
		}
	}
	run(t, append(append([]string(nil), qemu...), "unmount", mnt)...)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Fatalf("the ARM mount exited with %v:\n%s", err, log.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("the ARM mount did not exit after unmount:\n%s", log.String())
	}
	if isMounted(mnt) {
		t.Fatal("still mounted after unmount")
	}
	t.Logf("the ARM build said: %s", strings.TrimSpace(log.String()))

	img := filepath.Join(dir, "data.img")
	run(t, append([]string{host, "export", vol, img}, creds...)...)
	if out, err := exec.Command("fsck.fat", "-n", img).CombinedOutput(); err != nil {
		t.Fatalf("fsck.fat -n after the ARM mount: %v\n%s", err, out)
	}
	for name, data := range files {
		got := run(t, append([]string{host, "get", vol, name, "-"}, creds...)...)
		if !bytes.Equal(got, data) {
			t.Errorf("%s after unmount: %d bytes, want %d", name, len(got), len(data))
		}
	}
}

func buildCryptvol(t *testing.T, dir, name string, env ...string) string {
	t.Helper()
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/cryptvol")
	cmd.Env = append(os.Environ(), append([]string{"CGO_ENABLED=0"}, env...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

func run(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

func random(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// isMounted reports whether dir is a mount point, from /proc/self/mountinfo.
func isMounted(dir string) bool {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) > 4 && unescapeMount(fields[4]) == dir {
			return true
		}
	}
	return false
}

// unescapeMount undoes mountinfo's octal escapes of spaces and the like.
func unescapeMount(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var c int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &c); err == nil {
				b.WriteByte(byte(c))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
