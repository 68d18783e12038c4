//go:build linux || darwin

package mount

import (
	"os"
	"syscall"
)

// DetachedProcAttr makes a child process the leader of a new session, so
// that it outlives its parent and the terminal: what a mount daemon needs.
func DetachedProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}

// RedirectStderr points the process's standard error (file descriptor 2)
// at f, so that even a crash report of a daemon lands in its log.
func RedirectStderr(f *os.File) error { return redirectStderr(f) }

// Terminate sends SIGTERM to pid.
func Terminate(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
