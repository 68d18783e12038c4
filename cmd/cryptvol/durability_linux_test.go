//go:build linux

package main

// Durability of directory entries (issue 31, item 4): a command that
// creates or renames a container reports success only after the
// directory holding it is flushed, or a power cut may lose the file (or
// bring back the old one) even though its bytes were flushed. The
// recorder under the container cannot see a directory; strace -y can
// (each fd argument printed with its path).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// straceRun runs cryptvol args under strace and returns the trace of the
// calls that create, rename and flush files.
func straceRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	log := filepath.Join(dir, "strace.log")
	st := append([]string{"-f", "-y", "-qq", "-e", "trace=openat,rename,renameat,renameat2,fsync,fdatasync", "-o", log, "cryptvol"}, args...)
	if out, err := exec.Command("strace", st...).CombinedOutput(); err != nil {
		t.Fatalf("cryptvol %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// dirSyncedAfterEntry checks that the trace flushes dir after the last
// call that made path's entry there (an O_CREAT open or a rename onto
// it), and, for a rename, flushes the file renamed before it.
func dirSyncedAfterEntry(trace, dir, path string) error {
	lines := strings.Split(trace, "\n")
	base := filepath.Base(path)
	entry := -1
	from := "" // the file renamed onto path
	for i, l := range lines {
		switch {
		case strings.Contains(l, "rename") && strings.HasSuffix(strings.TrimSpace(strings.SplitN(l, ") =", 2)[0]), `"`+base+`"`) && !strings.Contains(l, "= -1"):
			entry = i
			if q := strings.Split(l, `"`); len(q) > 1 {
				from = q[1]
			}
		case strings.Contains(l, "openat(") && strings.Contains(l, "O_CREAT") && strings.Contains(l, `"`+path+`"`) && !strings.Contains(l, "= -1"):
			entry = i
		}
	}
	if entry < 0 {
		return fmt.Errorf("no call in the trace creates or renames onto %s", path)
	}
	if from != "" {
		// A rename publishes the file: its bytes must be on the disk
		// first, or the entry may point at a file a power cut emptied.
		synced := false
		for _, l := range lines[:entry] {
			if (strings.Contains(l, "fsync(") || strings.Contains(l, "fdatasync(")) && strings.Contains(l, "<"+filepath.Join(dir, from)+">") && !strings.Contains(l, "= -1") {
				synced = true
			}
		}
		if !synced {
			return fmt.Errorf("%s is renamed onto %s without a flush of its own before", from, base)
		}
	}
	for _, l := range lines[entry:] {
		if (strings.Contains(l, "fsync(") || strings.Contains(l, "fdatasync(")) && strings.Contains(l, "<"+dir+">") && !strings.Contains(l, "= -1") {
			return nil
		}
	}
	return fmt.Errorf("%s is never flushed after its entry %s is made (%s)", dir, base, strings.TrimSpace(lines[entry]))
}

func TestDirectoryEntriesFlushed(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed")
	}
	if out, err := exec.Command("strace", "-qq", "-e", "trace=none", "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v %s", err, out)
	}
	dir := t.TempDir()
	// strace -y prints the resolved path: resolve the temp dir's links.
	dir, _ = filepath.EvalSymlinks(dir)
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("durable-pass\n"), 0o600)
	src := filepath.Join(dir, "small.txt")
	os.WriteFile(src, []byte("a small file\n"), 0o644)
	vcCreate := []string{"--pim", "1", "--hash", "sha512", "--encryption", "aes"}
	vc := filepath.Join(dir, "v.hc")
	lk := filepath.Join(dir, "l.img")
	cva := filepath.Join(dir, "a.cva")
	cases := []struct {
		name string
		args []string
		path string
	}{
		{"create veracrypt", append([]string{"create", vc, "--size", "1M", "--password-file", pw, "--quick", "--non-interactive", "--filesystem", "fat"}, vcCreate...), vc},
		{"create luks2", []string{"create", lk, "--type", "luks2", "--size", "20M", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--password-file", pw, "--quick", "--non-interactive", "--filesystem", "fat"}, lk},
		{"archive create", []string{"archive", "create", cva, src, "--password-file", pw}, cva},
		{"archive compact", []string{"archive", "compact", cva, "--password-file", pw}, cva},
		{"header backup", append([]string{"header", "backup", vc, filepath.Join(dir, "v.hdr"), "--password-file", pw}, vcCreate[:4]...), filepath.Join(dir, "v.hdr")},
	}
	for _, c := range cases {
		trace := straceRun(t, dir, c.args...)
		if err := dirSyncedAfterEntry(trace, dir, c.path); err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else {
			t.Logf("%s: %s flushed after its entry for %s", c.name, dir, filepath.Base(c.path))
		}
	}
}

// The check fails a trace that renames a container into place without
// flushing its directory (the harness can fail).
func TestDirectoryFlushCheckCatchesMissingSync(t *testing.T) {
	trace := `100 openat(AT_FDCWD</>, "/d", O_RDONLY|O_CLOEXEC) = 5</d>
100 fsync(8</d/.v.hc.tmp>) = 0
100 renameat(5</d>, ".v.hc.tmp", 5</d>, "v.hc") = 0
`
	if err := dirSyncedAfterEntry(trace, "/d", "/d/v.hc"); err == nil {
		t.Fatal("a rename with no directory flush after it passed")
	}
	if err := dirSyncedAfterEntry(trace+"100 fsync(9</d>) = 0\n", "/d", "/d/v.hc"); err != nil {
		t.Fatalf("a rename followed by a directory flush failed: %v", err)
	}
	unsynced := strings.Replace(trace, "100 fsync(8</d/.v.hc.tmp>) = 0\n", "", 1)
	if err := dirSyncedAfterEntry(unsynced+"100 fsync(9</d>) = 0\n", "/d", "/d/v.hc"); err == nil {
		t.Fatal("a rename of a file never flushed passed")
	}
}

// TestPutFlushedBeforeExit: put of many files (renamed into place in
// batches, fswrite_batch.go) exits 0 only after its last write to the
// container is flushed, on FAT, exFAT and ext4; the flushes it issues
// are logged (issue 31, item 4).
func TestPutFlushedBeforeExit(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed")
	}
	if out, err := exec.Command("strace", "-qq", "-e", "trace=none", "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v %s", err, out)
	}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("durable-pass\n"), 0o600)
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "sub"), 0o755)
	for i := 0; i < 200; i++ {
		p := filepath.Join(src, fmt.Sprintf("f%03d.txt", i))
		if i%4 == 0 {
			p = filepath.Join(src, "sub", fmt.Sprintf("f%03d.txt", i))
		}
		os.WriteFile(p, []byte(strings.Repeat(fmt.Sprintf("file %d ", i), 500)), 0o644)
	}
	for _, fsType := range []string{"fat", "exfat", "ext4"} {
		vol := filepath.Join(dir, fsType+".hc")
		vc := []string{"--pim", "1", "--hash", "sha512"}
		cvIn(t, append([]string{"create", vol, "--size", "24M", "--password-file", pw, "--quick", "--non-interactive", "--filesystem", fsType, "--encryption", "aes"}, vc...)...)
		log := filepath.Join(dir, "put.strace")
		st := append([]string{"-f", "-y", "-qq", "-e", "trace=pwrite64,pwritev,pwritev2,write,fsync,fdatasync,exit_group", "-o", log, "cryptvol", "put", vol, "-r", src, "/", "--password-file", pw}, vc...)
		if out, err := exec.Command("strace", st...).CombinedOutput(); err != nil {
			t.Fatalf("put into %s: %v\n%s", fsType, err, out)
		}
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		lastWrite, lastFlush, exit, flushes := -1, -1, -1, 0
		for i, l := range strings.Split(string(b), "\n") {
			onVol := strings.Contains(l, "<"+vol+">") && !strings.Contains(l, "= -1")
			switch {
			case onVol && strings.Contains(l, "pwrite"):
				lastWrite = i
			case onVol && (strings.Contains(l, "fsync(") || strings.Contains(l, "fdatasync(")):
				lastFlush = i
				flushes++
			case strings.Contains(l, "exit_group("):
				exit = i
			}
		}
		if lastWrite < 0 || lastFlush < lastWrite || exit < lastFlush {
			t.Errorf("%s: put of 200 files: last write to the container at trace line %d, its last flush at %d, exit at %d: success is not after the flush", fsType, lastWrite, lastFlush, exit)
		} else {
			t.Logf("%s: put of 200 files: %d flushes of the container, the last after its last write, before exit", fsType, flushes)
		}
	}
}
