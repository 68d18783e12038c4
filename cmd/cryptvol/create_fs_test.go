//go:build unix

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/oracle"
	"github.com/cryptvol/cryptvol/mount"
)

// fsChecker is the real checker of each filesystem create makes, run
// read-only on a plain image of the data area.
var fsChecker = map[string][]string{
	"fat":   {"fsck.fat", "-n"},
	"exfat": {"fsck.exfat", "-n"},
	"ext4":  {"e2fsck", "-fn"},
	"ntfs":  {"ntfsfix", "-n"},
}

// needFSTools skips the test when a program it runs is missing.
func needFSTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// needDriverWrites skips a test that writes into ext4 or NTFS: those
// writes go through fuse2fs / ntfs-3g stacked on a FUSE mount.
func needDriverWrites(t *testing.T, fsName string) {
	t.Helper()
	driver := map[string]string{"ext4": "fuse2fs", "ntfs": "ntfs-3g"}[fsName]
	if driver == "" {
		return
	}
	if err := mount.Available(); err != nil {
		t.Skipf("writing %s goes through %s on FUSE: %v", fsName, driver, err)
	}
	needFSTools(t, driver)
}

// runChecker runs the filesystem's checker on img and fails the test
// unless it finds the filesystem clean.
func runChecker(t *testing.T, fsName, img string) {
	t.Helper()
	c := fsChecker[fsName]
	out, err := exec.Command(c[0], append(c[1:], img)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(c, " "), img, err, out)
	}
}

func cvOK(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := cvRun(env, 5*time.Minute, args...)
	if r.code != 0 {
		t.Fatalf("cryptvol %s: %v", strings.Join(args, " "), r)
	}
	return r.out
}

// TestCreateEachFilesystem creates every filesystem inside VeraCrypt and
// LUKS2 volumes of a few sizes, then proves each one with the real tools:
// the filesystem's own checker finds the exported data area clean, ls,
// put and get work on it, and VeraCrypt 1.26.24 opens the VeraCrypt ones
// and its decrypted device passes the same checker.
func TestCreateEachFilesystem(t *testing.T) {
	needFSTools(t, "fsck.fat", "fsck.exfat", "e2fsck", "mkfs.ext4", "mkntfs", "ntfsfix")
	vc, vcErr := oracle.Find(oracle.VeraCrypt12624)
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	src := filepath.Join(dir, "hello.txt")
	os.WriteFile(src, []byte("hello from cryptvol\n"), 0o644)
	type volCase struct {
		typ, size string
		fsys      []string
	}
	cases := []volCase{
		// 1 MiB leaves exFAT too little room for mkfs.exfat's 1 MiB alignment.
		{"veracrypt", "2M", []string{"fat", "exfat", "ext4", "ntfs"}},
		{"veracrypt", "48M", []string{"fat", "exfat", "ext4", "ntfs"}},
		{"luks2", "20M", []string{"fat", "exfat", "ext4", "ntfs"}},
		{"luks2", "300M", []string{"exfat", "ext4"}},
	}
	// The scratch images of mkfs.ext4 and mkntfs are gone.
	defer func() {
		if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
			t.Errorf("left in TMPDIR: %v", ents)
		}
	}()
	for _, c := range cases {
		for _, fsName := range c.fsys {
			t.Run(fmt.Sprintf("%s-%s-%s", c.typ, c.size, fsName), func(t *testing.T) {
				vol := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.vol", c.typ, c.size, fsName))
				creds := []string{"--password-file", pw}
				args := []string{"create", vol, "--size", c.size, "--filesystem", fsName, "--quick", "--non-interactive", "--type", c.typ}
				if c.typ == "luks2" {
					args = append(args, "--pbkdf", "pbkdf2", "--iter-time", "50")
				} else {
					creds = append(creds, "--pim", "1")
				}
				cvOK(t, env, append(args, creds...)...)
				plain := vol + ".plain"
				cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
				runChecker(t, fsName, plain)
				checkSectorFit(t, env, fsName, vol, plain, creds)
				needDriverWrites(t, fsName)

				cvOK(t, env, append([]string{"put", vol, src, "/"}, creds...)...)
				if out := cvOK(t, env, append([]string{"ls", vol, "/"}, creds...)...); !strings.Contains(out, "hello.txt") {
					t.Fatalf("ls after put does not list hello.txt:\n%s", out)
				}
				back := filepath.Join(dir, filepath.Base(vol)+".back")
				cvOK(t, env, append([]string{"get", vol, "/hello.txt", back}, creds...)...)
				if b, _ := os.ReadFile(back); string(b) != "hello from cryptvol\n" {
					t.Fatalf("get returned %q", b)
				}
				os.Remove(plain)
				cvOK(t, env, append([]string{"export", vol, plain}, creds...)...)
				runChecker(t, fsName, plain)
				os.Remove(plain)

				if c.typ != "veracrypt" {
					return
				}
				t.Run("VeraCrypt", func(t *testing.T) {
					if vc == nil {
						t.Skipf("VeraCrypt %s cannot run here: %v", oracle.VeraCrypt12624, vcErr)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
					defer cancel()
					m, err := vc.Mount(ctx, vol, oracle.MountOptions{Password: "correct horse battery staple", PIM: 1, ReadOnly: true})
					if err != nil {
						t.Fatalf("VeraCrypt %s does not open it: %v", vc.Version, err)
					}
					defer m.Dismount()
					runChecker(t, fsName, m.Dev)
					t.Logf("VeraCrypt %s opens it; %s finds its decrypted device %s clean", vc.Version, fsChecker[fsName][0], m.Dev)
				})
			})
		}
	}
}

// TestCreateMissingFormatter: with mkntfs not on PATH, create says which
// package to install, exits 6 (not 3: nothing is damaged) and leaves no
// container behind, neither under its name nor as a temporary file; ext4
// needs no mkfs.ext4 (it is built in), so that create succeeds.
func TestCreateMissingFormatter(t *testing.T) {
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	// An empty directory as PATH: cryptvol itself is started through the
	// test's own PATH.
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + bin
		}
	}
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	vol := filepath.Join(dir, "ext4.hc")
	if r := cvRun(env, time.Minute, "create", vol, "--size", "8M", "--filesystem", "ext4",
		"--quick", "--non-interactive", "--password-file", pw, "--pim", "1"); r.code != 0 {
		t.Errorf("create --filesystem ext4 without mkfs.ext4: %v; want exit 0 (built in)", r)
	}
	os.Remove(vol)
	for fsName, pkg := range map[string]string{"ntfs": "ntfs-3g"} {
		vol := filepath.Join(dir, fsName+".hc")
		r := cvRun(env, time.Minute, "create", vol, "--size", "8M", "--filesystem", fsName,
			"--quick", "--non-interactive", "--password-file", pw, "--pim", "1")
		if r.code != exitNoTool || !strings.Contains(r.out, "apt-get install "+pkg) {
			t.Errorf("create --filesystem %s without its mkfs: %v; want exit %d naming %s", fsName, r, exitNoTool, pkg)
		}
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), fsName+".hc") || strings.Contains(e.Name(), ".cryptvol-") {
				t.Errorf("left behind: %s", e.Name())
			}
		}
	}
}

// TestCreateHiddenNeedsKnownOuter: a hidden volume goes only behind the
// used space of an outer filesystem cryptvol reads (FAT, exFAT, NTFS,
// ext4; TestHiddenInOuterFilesystems has those); an outer volume with no
// filesystem is refused with exit 5, saying so, and left as it was.
// Inside a FAT outer, the hidden volume may hold exFAT.
func TestCreateHiddenNeedsKnownOuter(t *testing.T) {
	needFSTools(t, "fsck.exfat")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw, hpw := filepath.Join(dir, "pw"), filepath.Join(dir, "hpw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	os.WriteFile(hpw, []byte("another horse battery staple\n"), 0o600)
	outer := filepath.Join(dir, "none.hc")
	cvOK(t, env, "create", outer, "--size", "8M", "--filesystem", "none", "--quick", "--non-interactive", "--password-file", pw, "--pim", "1")
	before, _ := os.ReadFile(outer)
	r := cvRun(env, time.Minute, "create", outer, "--hidden", "--size", "2M", "--password-file", hpw, "--pim", "1",
		"--outer-password-file", pw, "--outer-pim", "1", "--non-interactive")
	if r.code != exitDestroy || !strings.Contains(r.out, "holds no filesystem cryptvol recognises") || !strings.Contains(r.out, "--force") {
		t.Errorf("hidden volume in an outer volume without a filesystem: %v; want exit %d saying so", r, exitDestroy)
	}
	if after, _ := os.ReadFile(outer); string(after) != string(before) {
		t.Error("the refused create changed the outer volume")
	}

	fatOuter := filepath.Join(dir, "fat.hc")
	cvOK(t, env, "create", fatOuter, "--size", "8M", "--quick", "--non-interactive", "--password-file", pw, "--pim", "1")
	cvOK(t, env, "create", fatOuter, "--hidden", "--size", "3M", "--filesystem", "exfat", "--password-file", hpw, "--pim", "1",
		"--outer-password-file", pw, "--outer-pim", "1", "--non-interactive")
	plain := filepath.Join(dir, "hidden.img")
	cvOK(t, env, "export", fatOuter, plain, "--password-file", hpw, "--pim", "1")
	runChecker(t, "exfat", plain)
}

// TestCreateExternalInterrupted: Ctrl-C while mkfs.ext4 runs or its image
// is being written into the volume ends create with exit 130, and neither
// the container (under its name or a temporary one) nor the scratch image
// is left behind.
func TestCreateExternalInterrupted(t *testing.T) {
	needFSTools(t, "mkfs.ext4")
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("correct horse battery staple\n"), 0o600)
	vol := filepath.Join(dir, "big.hc")
	cmd := exec.Command(cvBin(), "create", vol, "--size", "2G", "--filesystem", "ext4", "--quick", "--non-interactive", "--password-file", pw, "--pim", "1")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "Making ext4") {
		n, err := stderr.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			break
		}
	}
	cmd.Process.Signal(os.Interrupt)
	rest, _ := io.ReadAll(stderr)
	seen.Write(rest)
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code == 0 {
		t.Skipf("create finished before the interrupt arrived: %s", seen.String())
	}
	if code != exitCancelled {
		t.Fatalf("interrupted create: exit %d, want %d: %s", code, exitCancelled, seen.String())
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "big.hc") || strings.Contains(e.Name(), ".cryptvol-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(ents) != 0 {
		t.Errorf("left in TMPDIR: %v", ents)
	}
	t.Logf("%s", strings.TrimSpace(seen.String()))
}

// checkSectorFit: ext4's blocks and NTFS's sectors are no smaller than
// the volume's sector (a LUKS2 volume's is 4096 bytes by default), or the
// kernel could not mount the decrypted device.
func checkSectorFit(t *testing.T, env []string, fsName, vol, plain string, creds []string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Sector size: +(\d+)`).FindStringSubmatch(cvOK(t, env, append([]string{"info", vol}, creds...)...))
	if m == nil {
		t.Fatal("info shows no sector size")
	}
	ss, _ := strconv.Atoi(m[1])
	switch fsName {
	case "ext4":
		out, err := exec.Command("dumpe2fs", "-h", plain).Output()
		b := regexp.MustCompile(`Block size:\s+(\d+)`).FindSubmatch(out)
		if err != nil || b == nil {
			t.Fatalf("dumpe2fs -h: %v", err)
		}
		if bs, _ := strconv.Atoi(string(b[1])); bs < ss {
			t.Errorf("ext4 blocks of %d bytes in a volume of %d-byte sectors", bs, ss)
		}
	case "ntfs":
		f, _ := os.Open(plain)
		boot := make([]byte, 512)
		f.ReadAt(boot, 0)
		f.Close()
		if bps := int(boot[11]) | int(boot[12])<<8; bps != ss {
			t.Errorf("NTFS of %d-byte sectors in a volume of %d-byte sectors", bps, ss)
		}
	}
}
