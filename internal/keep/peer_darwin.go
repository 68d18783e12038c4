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
	okUID := false
	withSocketFD(c, func(fd int) {
		cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		okUID = err == nil && (int(cred.Uid) == os.Geteuid() || cred.Uid == 0)
	})
	return okUID
}

// peerPID is the process that listens on the socket c is connected to
// (LOCAL_PEERPID), 0 if unknown.
func peerPID(c net.Conn) int {
	pid := 0
	withSocketFD(c, func(fd int) {
		if p, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
			pid = p
		}
	})
	return pid
}
