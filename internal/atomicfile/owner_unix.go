//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// killAlive asks the kernel whether pid exists (signal 0). A PID may have
// been reused, so a running process is not a sure answer.
func killAlive(pid int) (alive, sure bool) {
	err := unix.Kill(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return false, true
	}
	return true, false
}

// fileOwner returns the owner of st if it is not this process's user and
// group, for Rename to restore.
func fileOwner(st fs.FileInfo) *owner {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok || (int(s.Uid) == os.Geteuid() && int(s.Gid) == os.Getegid()) {
		return nil
	}
	return &owner{uid: int(s.Uid), gid: int(s.Gid)}
}
