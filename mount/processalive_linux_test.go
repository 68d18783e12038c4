package mount

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// leaderExitEnv makes the test binary the helper of
// TestProcessAliveWhileThreadsRemain: it locks the file named there and
// ends its first thread alone.
const leaderExitEnv = "CRYPTVOL_TEST_LEADER_EXIT"

func init() {
	if os.Getenv(leaderExitEnv) != "" {
		// The main goroutine stays on the process's first thread.
		runtime.LockOSThread()
	}
}

func TestMain(m *testing.M) {
	if f := os.Getenv(leaderExitEnv); f != "" {
		leaderExitHelper(f)
	}
	if os.Getenv(rawHelperEnv) != "" && IsDaemon() {
		rawHelperMain()
	}
	os.Exit(m.Run())
}

// leaderExitHelper flocks file, and ends the first thread (SYS_EXIT, not
// exit_group) while another thread waits for standard input to close
// before it ends the process: the state a process killed while a thread
// is inside a long system call is in.
func leaderExitHelper(file string) {
	debug.SetGCPercent(-1) // no stop-the-world waiting for the dead thread
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		os.Exit(2)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		os.Exit(2)
	}
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		close(ready)
		var b [1]byte
		unix.Read(0, b[:])
		unix.Exit(0)
	}()
	<-ready
	os.Stdout.WriteString("ready\n")
	unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0)
}

// A process whose first thread has ended while another still runs is
// alive, and holds its files (and the volume lock) open: unmount, which
// waits for the mount daemon with ProcessAlive, must go on waiting. It
// did not (the first thread's zombie state was taken for the process's):
// in the kill campaign a put right after `cryptvol unmount` of a killed
// daemon's mount was refused, "is mounted at", exit 5.
func TestProcessAliveWhileThreadsRemain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "volume")
	os.WriteFile(file, nil, 0o600)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderExitEnv+"="+file)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
		t.Fatalf("helper said %q", line)
	}
	pid := cmd.Process.Pid
	stat := "/proc/" + strconv.Itoa(pid) + "/stat"
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		b, _ := os.ReadFile(stat)
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper's first thread did not end: %s", b)
		}
	}
	f, _ := os.Open(file)
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err == nil {
		t.Fatal("the helper's lock is not held: the test shows nothing")
	}
	if !ProcessAlive(pid) {
		t.Fatal("ProcessAlive says the process is gone while a thread of it runs and holds its lock")
	}
	stdin.Close()
	cmd.Wait()
	if ProcessAlive(pid) {
		t.Fatal("ProcessAlive says an ended process runs")
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		t.Fatalf("the lock is still held after the helper ended: %v", err)
	}
}
