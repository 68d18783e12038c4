//go:build windows

package keep

import (
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// detached starts the agent without a console, in its own process group,
// so that it outlives the command that started it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS}
}

func harden() {}

func lockMemory(b []byte) {
	if len(b) > 0 {
		windows.VirtualLock(uintptr(unsafePointer(b)), uintptr(len(b)))
	}
}

func unlockMemory(b []byte) {
	if len(b) > 0 {
		windows.VirtualUnlock(uintptr(unsafePointer(b)), uintptr(len(b)))
	}
}

// listenPrivate listens on an AF_UNIX socket. Its directory, under the
// user's local application data, is readable by that user only (Windows
// gives each profile an ACL of its own), which is what keeps others out.
func listenPrivate(path string) (net.Listener, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("agent socket: %w", err)
	}
	return l, nil
}

func checkPrivate(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	return nil
}

func peerIsOwner(c net.Conn) bool { return true }

// peerPID cannot tell the socket's listener here.
func peerPID(c net.Conn) int { return 0 }

// tryLockFile takes an exclusive lock on f without waiting; false when
// another process holds it. The lock goes with the handle.
func tryLockFile(f *os.File) bool {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol) == nil
}
