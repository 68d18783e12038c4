//go:build unix

package keep

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// detached starts the agent in a session of its own, so that it outlives
// the terminal and the command that started it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// harden keeps the agent's memory out of core dumps (and, on Linux, out of
// reach of ptrace by other processes of the same user).
func harden() {
	unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	noDump()
}

// lockMemory keeps a secret out of swap where the system allows it.
func lockMemory(b []byte) {
	if len(b) > 0 {
		unix.Mlock(b)
	}
}

func unlockMemory(b []byte) {
	if len(b) > 0 {
		unix.Munlock(b)
	}
}

// listenPrivate listens on a socket that only this user can connect to:
// created with umask 177, so never wider than 0600 (the directory is 0700).
func listenPrivate(path string) (net.Listener, error) {
	old := unix.Umask(0o177)
	l, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	return l, nil
}

// checkPrivate refuses a directory that another user owns or that others
// may enter.
func checkPrivate(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s belongs to user %d, not to you", dir, st.Uid)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %o): it must be 0700", dir, fi.Mode().Perm())
	}
	return nil
}

// tryLockFile takes an exclusive lock on f without waiting; false when
// another process holds it. The lock goes with the process.
func tryLockFile(f *os.File) bool {
	return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}

// withSocketFD runs f on the descriptor of the Unix socket c; false when
// c is not one.
func withSocketFD(c net.Conn, f func(fd int)) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	return raw.Control(func(fd uintptr) { f(int(fd)) }) == nil
}
