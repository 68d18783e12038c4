//go:build linux && (amd64 || arm64)

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// killAt is the test program `killat N REPORT COMMAND ARGS...`: it runs
// COMMAND under ptrace, counts the system calls with which it changes a
// file (writes, syncs, truncations, renames, removals, creations: see
// changeCall) and kills it with SIGKILL on entering the Nth (0: never),
// so that the first N-1 are done and the Nth is not. It writes what it
// saw to REPORT (killAtReport as JSON) and exits as COMMAND did (128+9
// when killed). The kill campaign kills at every point between two
// writes this way, which a kill after a delay almost never hits.
func killAt() int {
	args := os.Args[1:]
	if len(args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: killat N REPORT COMMAND [ARGS...]")
		return 1
	}
	n, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "killat:", err)
		return 1
	}
	bin, err := exec.LookPath(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "killat:", err)
		return 1
	}
	// Every ptrace request must come from the thread that started it.
	runtime.LockOSThread()
	cmd := exec.Command(bin, args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "killat:", err)
		return 1
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil || !ws.Stopped() {
		fmt.Fprintln(os.Stderr, "killat: the command did not stop at its start:", err)
		return 1
	}
	if err := syscall.PtraceSetOptions(pid, syscall.PTRACE_O_TRACESYSGOOD|syscall.PTRACE_O_TRACECLONE|unix.PTRACE_O_EXITKILL); err != nil {
		fmt.Fprintln(os.Stderr, "killat:", err)
		syscall.Kill(pid, syscall.SIGKILL)
		return 1
	}
	syscall.PtraceSyscall(pid, 0)

	var rep killAtReport
	inCall := map[int]bool{} // thread -> between its entry and exit stops
	seen := map[int]bool{pid: true}
	code := 0
	for {
		tid, err := syscall.Wait4(-1, &ws, syscall.WALL, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			break // no thread left
		}
		if ws.Exited() || ws.Signaled() {
			if tid == pid {
				code = ws.ExitStatus()
				if ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
			}
			delete(inCall, tid)
			continue
		}
		if !ws.Stopped() {
			continue
		}
		first := !seen[tid]
		seen[tid] = true
		switch sig := ws.StopSignal(); {
		case sig == syscall.SIGTRAP|0x80: // a system call's entry or exit
			entering := !inCall[tid]
			inCall[tid] = entering
			if entering && !rep.Killed {
				if call, ok := changeCall(pid, tid); ok {
					rep.Calls++
					if n == 0 && len(rep.Trace) < maxTrace {
						rep.Trace = append(rep.Trace, call)
					}
					if rep.Calls == n {
						syscall.Kill(pid, syscall.SIGKILL)
						rep.Killed, rep.Call = true, call
						continue
					}
				}
			}
			syscall.PtraceSyscall(tid, 0)
		case sig == syscall.SIGTRAP, sig == syscall.SIGSTOP && first:
			// A clone or exec event; a new thread's first stop.
			syscall.PtraceSyscall(tid, 0)
		default:
			syscall.PtraceSyscall(tid, int(sig))
		}
	}
	if b, err := json.Marshal(rep); err == nil {
		os.WriteFile(args[1], b, 0o600)
	}
	return code
}

// killAtReport is what killat saw.
type killAtReport struct {
	Calls  int64  `json:"calls"`  // file-changing calls entered (the last one not done when killed)
	Killed bool   `json:"killed"` // killed at call Calls
	Call   string `json:"call"`   // the call it was killed at
	// Trace is, for N = 0 (a run to the end that counts), every
	// file-changing call in order (the first maxTrace), so that a
	// campaign can aim a kill at one phase of the command.
	Trace []string `json:"trace,omitempty"`
}

const maxTrace = 1 << 16

// killAtSupported reports whether killat can run here.
func killAtSupported() error { return nil }

// changeCall reports whether thread tid of pid, stopped at a system
// call's entry, is about to change a file, and which call it is.
func changeCall(pid, tid int) (string, bool) {
	var regs syscall.PtraceRegs
	if err := syscall.PtraceGetRegs(tid, &regs); err != nil {
		return "", false
	}
	nr, a := callArgs(&regs)
	if name, ok := fdCalls[nr]; ok {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, a[0]))
		if err != nil {
			return "", false
		}
		if fi, err := os.Stat(fmt.Sprintf("/proc/%d/fd/%d", pid, a[0])); err != nil || !fi.Mode().IsRegular() {
			return "", false // a pipe, the terminal, an eventfd
		}
		switch nr {
		case unix.SYS_PWRITE64:
			return fmt.Sprintf("%s(%s, %d bytes at %d)", name, target, a[2], a[3]), true
		case unix.SYS_WRITE:
			return fmt.Sprintf("%s(%s, %d bytes)", name, target, a[2]), true
		case unix.SYS_FTRUNCATE:
			return fmt.Sprintf("%s(%s, %d)", name, target, a[1]), true
		}
		return fmt.Sprintf("%s(%s)", name, target), true
	}
	if name, ok := pathCalls[nr]; ok {
		return name, true
	}
	if nr == unix.SYS_OPENAT && a[2]&(unix.O_CREAT|unix.O_TRUNC) != 0 {
		return fmt.Sprintf("openat(flags %#x)", a[2]), true
	}
	if name, ok := openCreate(nr, a); ok {
		return name, true
	}
	return "", false
}

// fdCalls change the file their first argument names.
var fdCalls = map[uint64]string{
	unix.SYS_WRITE: "write", unix.SYS_PWRITE64: "pwrite64", unix.SYS_WRITEV: "writev",
	unix.SYS_PWRITEV: "pwritev", unix.SYS_PWRITEV2: "pwritev2", unix.SYS_FSYNC: "fsync",
	unix.SYS_FDATASYNC: "fdatasync", unix.SYS_FTRUNCATE: "ftruncate", unix.SYS_FALLOCATE: "fallocate",
	unix.SYS_SYNC_FILE_RANGE: "sync_file_range", unix.SYS_FCHMOD: "fchmod", unix.SYS_FCHOWN: "fchown",
}

// pathCalls change the directory tree.
var pathCalls = withArchPathCalls(map[uint64]string{
	unix.SYS_RENAMEAT: "renameat", unix.SYS_RENAMEAT2: "renameat2", unix.SYS_UNLINKAT: "unlinkat",
	unix.SYS_MKDIRAT: "mkdirat", unix.SYS_LINKAT: "linkat", unix.SYS_SYMLINKAT: "symlinkat",
	unix.SYS_FCHMODAT: "fchmodat", unix.SYS_FCHOWNAT: "fchownat", unix.SYS_TRUNCATE: "truncate",
})
