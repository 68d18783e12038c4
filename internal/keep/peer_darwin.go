//go:build darwin

package keep

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

func noDump() {}

// peerIsOwner checks the connecting process's user (LOCAL_PEERCRED).
func peerIsOwner(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	okUID := false
	raw.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		okUID = err == nil && (int(cred.Uid) == os.Geteuid() || cred.Uid == 0)
	})
	return okUID
}

// peerPID is the process that listens on the socket c is connected to
// (LOCAL_PEERPID), 0 if unknown.
func peerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	pid := 0
	raw.Control(func(fd uintptr) {
		if p, err := unix.GetsockoptInt(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
			pid = p
		}
	})
	return pid
}
