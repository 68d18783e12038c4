package lock

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/filelock"
)

// These tests run on every platform with locks: flock on Unix, LockFileEx
// on Windows (the CI runs them under Wine).

func skipWithoutLocks(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := filelock.TryLock(f, false, filelock.Primary); errors.Is(err, filelock.ErrNoLocks) {
		t.Skip("this platform has no advisory locks (lock_other.go)")
	}
}

func setup(t *testing.T) string {
	t.Helper()
	skipWithoutLocks(t)
	t.Setenv("CRYPTVOL_RUNTIME_DIR", filepath.Join(t.TempDir(), "run"))
	p := filepath.Join(t.TempDir(), "vol.hc")
	if err := os.WriteFile(p, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func open(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustAcquire(t *testing.T, f *os.File, p string, exclusive bool) *Lock {
	t.Helper()
	l, err := Acquire(f, p, exclusive)
	if err != nil {
		t.Fatalf("Acquire(exclusive=%v): %v", exclusive, err)
	}
	if l.Warning != "" {
		t.Fatalf("no lock taken: %s", l.Warning)
	}
	return l
}

func mustRefuse(t *testing.T, f *os.File, p string, exclusive bool) *LockedError {
	t.Helper()
	l, err := Acquire(f, p, exclusive)
	if err == nil {
		l.Release()
		t.Fatalf("Acquire(exclusive=%v) succeeded against a conflicting holder", exclusive)
	}
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire(exclusive=%v): %v, want a LockedError", exclusive, err)
	}
	return le
}

func TestSharedReadersExclusiveWriter(t *testing.T) {
	p := setup(t)
	SetIdentity("cryptvol ls", "")
	defer SetIdentity("", "")
	r1 := mustAcquire(t, open(t, p), p, false)
	r2 := mustAcquire(t, open(t, p), p, false)

	le := mustRefuse(t, open(t, p), p, true)
	if len(le.Holders) != 2 || le.Holders[0].PID != os.Getpid() || le.Holders[0].Command != "cryptvol ls" || le.Holders[0].Exclusive {
		t.Fatalf("holders %+v, want the two readers", le.Holders)
	}
	want := fmt.Sprintf("%s is being read by cryptvol ls (PID %d) and 1 other process: try again when it has finished", p, os.Getpid())
	if le.Error() != want {
		t.Errorf("message %q\nwant    %q", le.Error(), want)
	}

	r1.Release()
	r2.Release()
	r2.Release() // twice is harmless
	SetIdentity("cryptvol put", "")
	w := mustAcquire(t, open(t, p), p, true)
	le = mustRefuse(t, open(t, p), p, false)
	want = fmt.Sprintf("%s is being written by cryptvol put (PID %d): try again when it has finished", p, os.Getpid())
	if le.Error() != want {
		t.Errorf("message %q\nwant    %q", le.Error(), want)
	}
	mustRefuse(t, open(t, p), p, true)
	w.Release()
	mustAcquire(t, open(t, p), p, false).Release()
	if left := recordFiles(t); len(left) != 0 {
		t.Errorf("records left after every release: %v", left)
	}
}

func recordFiles(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(RecordDir(), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestMountHolderMessages(t *testing.T) {
	p := setup(t)
	defer SetIdentity("", "")
	SetIdentity("cryptvol mount", "/mnt/x")
	m := mustAcquire(t, open(t, p), p, true)
	SetIdentity("cryptvol get", "")
	le := mustRefuse(t, open(t, p), p, false)
	want := fmt.Sprintf("%s is mounted at /mnt/x by PID %d: use the files there, or unmount it first ('cryptvol unmount /mnt/x')", p, os.Getpid())
	if le.Error() != want {
		t.Errorf("reader told %q\nwant      %q", le.Error(), want)
	}
	le = mustRefuse(t, open(t, p), p, true)
	if !strings.Contains(le.Error(), "is mounted at /mnt/x by PID") || !strings.Contains(le.Error(), "write to it through the mount") {
		t.Errorf("writer told %q", le.Error())
	}
	m.Release()

	SetIdentity("cryptvol mount", "/mnt/ro")
	ro := mustAcquire(t, open(t, p), p, false)
	SetIdentity("cryptvol put", "")
	mustAcquire(t, open(t, p), p, false).Release() // readers share a read-only mount
	le = mustRefuse(t, open(t, p), p, true)
	if !strings.Contains(le.Error(), "is mounted read-only at /mnt/ro by PID") {
		t.Errorf("writer told %q", le.Error())
	}
	ro.Release()
}

// TestUnknownHolder: a holder without a record is still refused, and the
// message says that it cannot be named.
func TestUnknownHolder(t *testing.T) {
	p := setup(t)
	f := open(t, p)
	unlock, err := filelock.TryLock(f, true, filelock.Primary) // a lock without a record
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	start := time.Now()
	le := mustRefuse(t, open(t, p), p, false)
	if len(le.Holders) != 0 || !strings.Contains(le.Error(), "in use by another process") {
		t.Errorf("got %+v: %v", le.Holders, le)
	}
	if d := time.Since(start); d < lookFor {
		t.Errorf("gave up after %v, before the holder had the %v to write its record", d, lookFor)
	}
}

// TestStaleRecords: records of dead processes, and records the lock proves
// stale, are removed and never named as holders.
func TestStaleRecords(t *testing.T) {
	p := setup(t)
	f := open(t, p)
	id, err := fileID(f)
	if err != nil {
		t.Fatal(err)
	}
	dead := deadPID(t)
	if err := os.MkdirAll(RecordDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	fake := func(name string, h Holder) string {
		b, _ := json.Marshal(h)
		path := filepath.Join(RecordDir(), name)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	deadWriter := fake(id+".1.1.json", Holder{PID: dead, Command: "cryptvol put", Exclusive: true})
	liveWriter := fake(id+".2.1.json", Holder{PID: os.Getpid(), Command: "cryptvol mv", Exclusive: true}) // alive, but not holding
	// A lock held without a record: the refused caller must not name the
	// dead process, and must drop its record.
	unlock, err := filelock.TryLock(f, true, filelock.Primary)
	if err != nil {
		t.Fatal(err)
	}
	otherFile := fake("1-2.1.1.json", Holder{PID: dead, Command: "cryptvol rm", Exclusive: true}) // another file's
	le := mustRefuse(t, open(t, p), p, true)
	if len(le.Holders) != 1 || le.Holders[0].Command != "cryptvol mv" {
		t.Errorf("holders %+v, want only the live one", le.Holders)
	}
	if _, err := os.Stat(deadWriter); !os.IsNotExist(err) {
		t.Errorf("the dead process's record was kept")
	}
	unlock()
	// Taking the lock shared proves there is no exclusive holder.
	l := mustAcquire(t, open(t, p), p, false)
	if _, err := os.Stat(liveWriter); !os.IsNotExist(err) {
		t.Errorf("an exclusive record survived a shared lock being granted")
	}
	if n := len(recordFiles(t)); n != 1 {
		t.Errorf("%d records, want the new holder's only", n)
	}
	if _, err := os.Stat(otherFile); !os.IsNotExist(err) {
		t.Errorf("a dead process's record of another file was kept")
	}
	l.Release()
}

// deadPID returns the PID of no running process: the highest ones are
// free on any ordinary system (Linux's pid_max tops out at 2^22; Windows
// PIDs are multiples of 4).
func deadPID(t *testing.T) int {
	t.Helper()
	for p := 1<<22 - 3; p > 1<<16; p -= 7 {
		if !processAlive(p) {
			return p
		}
	}
	t.Fatal("no free PID found")
	return 0
}

// TestLockDoesNotBlockIO: on Windows, whose locks are mandatory, the
// locked byte lies beyond the data, so other handles still read and write.
func TestLockDoesNotBlockIO(t *testing.T) {
	p := setup(t)
	l := mustAcquire(t, open(t, p), p, true)
	defer l.Release()
	g := open(t, p)
	if _, err := g.WriteAt([]byte("data"), 0); err != nil {
		t.Fatalf("write through another handle: %v", err)
	}
	b := make([]byte, 4)
	if _, err := g.ReadAt(b, 0); err != nil || string(b) != "data" {
		t.Fatalf("read through another handle: %q, %v", b, err)
	}
}

// TestAcrossProcesses: another process's lock is seen with its record; when
// that process is killed the kernel frees the lock and its record, left
// behind, is recognised as stale.
func TestAcrossProcesses(t *testing.T) {
	if p := os.Getenv("LOCK_TEST_HOLD"); p != "" {
		holdForParent(p)
		return
	}
	p := setup(t)
	cmd := startHolder(t, p)
	defer cmd.Process.Kill()
	le := mustRefuse(t, open(t, p), p, false)
	if len(le.Holders) != 1 || le.Holders[0].PID != cmd.Process.Pid || le.Holders[0].Command != "cryptvol format" {
		t.Errorf("holders %+v, want the child (PID %d)", le.Holders, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if n := len(recordFiles(t)); n != 1 {
		t.Fatalf("%d records after the kill, want the child's stale one", n)
	}
	l := mustAcquire(t, open(t, p), p, true)
	if n := len(recordFiles(t)); n != 1 {
		t.Errorf("%d records, want only the new holder's", n)
	}
	l.Release()
}

// startHolder starts another process that holds p locked exclusively
// with a record naming it "cryptvol format": a copy of this test binary;
// or, where that cannot start (a foreign binary under qemu-user without
// binfmt_misc), flock(1) holding the lock and a record written for it.
func startHolder(t *testing.T, p string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcrossProcesses$")
	cmd.Env = append(os.Environ(), "LOCK_TEST_HOLD="+p)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		if !errors.Is(err, syscall.ENOEXEC) {
			t.Fatal(err)
		}
		return startFlock(t, p, err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "locked") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q, %v", line, err)
	}
	return cmd
}

func startFlock(t *testing.T, p string, why error) *exec.Cmd {
	t.Helper()
	_, errF := exec.LookPath("flock")
	sh, errS := exec.LookPath("sh")
	if errF != nil || errS != nil {
		t.Skipf("no other process can hold the lock here: this test binary cannot start a copy of itself (%v), and flock(1) (util-linux) or sh is missing", why)
	}
	// One process: the shell opens the file, flock(1) locks that open
	// file, and the shell becomes sleep, still holding it.
	cmd := exec.Command(sh, "-c", `exec 9<>"$1" && flock -x 9 && echo locked && exec sleep 60`, "sh", p)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("flock: %q, %v", line, err)
	}
	f := open(t, p)
	id, err := fileID(f)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(RecordDir(), 0o700)
	b, _ := json.Marshal(Holder{PID: cmd.Process.Pid, Command: "cryptvol format", Exclusive: true, Path: p})
	if err := os.WriteFile(filepath.Join(RecordDir(), fmt.Sprintf("%s.%d.1.json", id, cmd.Process.Pid)), b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("the holder is flock(1), with a record written for it: %v", why)
	return cmd
}

// holdForParent is the child of TestAcrossProcesses: it locks, says so,
// and waits to be killed.
func holdForParent(p string) {
	SetIdentity("cryptvol format", "")
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	if _, err := Acquire(f, p, true); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(1)
}
