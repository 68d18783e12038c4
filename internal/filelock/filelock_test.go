package filelock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// open opens p once more: a new open file, which holds locks of its own.
func open(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func lockable(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	f := open(t, p)
	unlock, err := TryLock(f, true, Primary)
	if errors.Is(err, ErrNoLocks) {
		t.Skipf("no file locks in %s", filepath.Dir(p))
	}
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	return p
}

// TestExclusiveExcludesEverything: an exclusive lock refuses a second
// exclusive one and a shared one (ErrBusy), Held sees it, and unlocking
// frees the file.
func TestExclusiveExcludesEverything(t *testing.T) {
	p := lockable(t)
	a, b := open(t, p), open(t, p)
	unlock, err := TryLock(a, true, Primary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(b, true, Primary); !errors.Is(err, ErrBusy) {
		t.Errorf("second exclusive lock: %v, want ErrBusy", err)
	}
	if _, err := TryLock(b, false, Primary); !errors.Is(err, ErrBusy) {
		t.Errorf("shared lock beside an exclusive one: %v, want ErrBusy", err)
	}
	if !Held(b, Primary) {
		t.Error("Held does not see the exclusive lock")
	}
	unlock()
	if Held(b, Primary) {
		t.Error("Held still sees the lock after unlock")
	}
	u2, err := TryLock(b, true, Primary)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	u2()
}

// TestSharedLocksCoexist: readers share; a writer waits for all of them.
func TestSharedLocksCoexist(t *testing.T) {
	p := lockable(t)
	a, b, c := open(t, p), open(t, p), open(t, p)
	ua, err := TryLock(a, false, Primary)
	if err != nil {
		t.Fatal(err)
	}
	ub, err := TryLock(b, false, Primary)
	if err != nil {
		t.Fatalf("second shared lock: %v", err)
	}
	if _, err := TryLock(c, true, Primary); !errors.Is(err, ErrBusy) {
		t.Errorf("exclusive lock beside shared ones: %v, want ErrBusy", err)
	}
	ua()
	if _, err := TryLock(c, true, Primary); !errors.Is(err, ErrBusy) {
		t.Errorf("exclusive lock beside one shared lock: %v, want ErrBusy", err)
	}
	ub()
	uc, err := TryLock(c, true, Primary)
	if err != nil {
		t.Fatalf("exclusive lock once the readers are gone: %v", err)
	}
	uc()
}

// TestCloseReleases: closing the open file drops its lock.
func TestCloseReleases(t *testing.T) {
	p := lockable(t)
	a, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(a, true, Primary); err != nil {
		t.Fatal(err)
	}
	b := open(t, p)
	if !Held(b, Primary) {
		t.Fatal("Held does not see the lock")
	}
	a.Close()
	if Held(b, Primary) {
		t.Error("the lock outlived the file that held it")
	}
}

// TestBytesAreIndependentOnWindows: on Windows the Primary and Temporary
// locks of one file do not conflict (an archive being compacted holds
// both); flock has one lock per file, which the same open file may take
// again.
func TestBytesAreIndependentOnWindows(t *testing.T) {
	p := lockable(t)
	a, b := open(t, p), open(t, p)
	ua, err := TryLock(a, true, Primary)
	if err != nil {
		t.Fatal(err)
	}
	defer ua()
	if runtime.GOOS == "windows" {
		ub, err := TryLock(b, true, Temporary)
		if err != nil {
			t.Fatalf("Temporary beside Primary: %v", err)
		}
		ub()
		return
	}
	again, err := TryLock(a, true, Temporary)
	if err != nil {
		t.Fatalf("the holder locking again: %v", err)
	}
	_ = again // unlocking it would drop the whole flock
}

// TestKilledHolderReleases: a process killed while holding the lock
// leaves none behind (the kernel drops it).
func TestKilledHolderReleases(t *testing.T) {
	if os.Getenv("FILELOCK_HOLD") != "" {
		f, err := os.OpenFile(os.Getenv("FILELOCK_HOLD"), os.O_RDWR, 0)
		if err != nil {
			os.Exit(2)
		}
		if _, err := TryLock(f, true, Primary); err != nil {
			os.Exit(3)
		}
		os.Stdout.Write([]byte("locked\n"))
		select {} // until killed
	}
	p := lockable(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledHolderReleases$")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+p)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the holder did not lock: %q %v", buf, err)
	}
	f := open(t, p)
	if !Held(f, Primary) {
		t.Error("Held does not see the other process's lock")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if Held(f, Primary) {
		t.Error("the killed process's lock is still held")
	}
}
