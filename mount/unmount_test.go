package mount

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// exitedPID runs the test binary with no tests and returns its PID once
// it has exited and been reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func needDaemons(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipping: no mount daemons on Windows")
	}
}

// TestUnmountAllEmptyTable: nothing recorded, nothing to do, no error.
func TestUnmountAllEmptyTable(t *testing.T) {
	needDaemons(t)
	tab := Table{Dir: filepath.Join(t.TempDir(), "run")}
	called := false
	n, err := UnmountAll(context.Background(), tab, false, time.Second, func(Entry, error) { called = true })
	if n != 0 || err != nil || called {
		t.Fatalf("UnmountAll of an empty table: %d, %v (failure reported: %v); want 0, nil", n, err, called)
	}
}

// TestWaitForExit: a process that has exited is waited for at once; one
// still running past the timeout is an I/O failure naming its PID; a
// cancelled context returns its own error.
func TestWaitForExit(t *testing.T) {
	needDaemons(t)
	start := time.Now()
	if err := WaitForExit(context.Background(), exitedPID(t), time.Minute); err != nil {
		t.Fatalf("WaitForExit of an exited process: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("WaitForExit of an exited process took %v", d)
	}

	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Skipf("skipping the running case: %v", err)
	}
	defer func() {
		sleeper.Process.Kill()
		sleeper.Wait()
	}()
	err := WaitForExit(context.Background(), sleeper.Process.Pid, 100*time.Millisecond)
	var f *Failure
	if !errors.As(err, &f) || f.Kind != KindIO {
		t.Errorf("WaitForExit of a running process past its timeout: %v; want a KindIO failure", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WaitForExit(ctx, sleeper.Process.Pid, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitForExit with a cancelled context: %v; want context.Canceled", err)
	}
}
