//go:build linux

package keep

import (
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// noDump makes the agent undumpable: no core file, and no ptrace or
// /proc/PID/mem by other processes of the user.
func noDump() { unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// peerIsOwner checks the connecting process's user (SO_PEERCRED): only
// this user and root get an answer.
func peerIsOwner(c net.Conn) bool {
	okUID := false
	withSocketFD(c, func(fd int) {
		cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		okUID = err == nil && (int(cred.Uid) == os.Geteuid() || cred.Uid == 0)
	})
	return okUID
}

// peerPID is the process that listens on the socket c is connected to
// (SO_PEERCRED on the client side names the listener), 0 if unknown.
func peerPID(c net.Conn) int {
	pid := 0
	withSocketFD(c, func(fd int) {
		if cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cred.Pid)
		}
	})
	return pid
}
