package mount

import (
	"os"
	"syscall"
)

// PrivateMountsAvailable reports whether a Child started with
// ChildOptions.PrivateMounts gets a mount namespace of its own. As root it
// does (CLONE_NEWNS, with every mount made private so nothing propagates
// back). Without root it would take a user namespace as well, and the
// drivers do not mount from one: ntfs-3g (setuid root on Debian) and
// fusermount3 refuse to run setuid inside it, and mount(2) of a FUSE
// filesystem there would map the user to root of the namespace, which the
// raw file's owner check then refuses. So an ordinary user's private
// mounts stay in a private directory, and the next command cleans up what
// a killed one left (CleanPrivateMounts).
func PrivateMountsAvailable() bool { return os.Geteuid() == 0 }

func privateMountsProcAttr(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	if !PrivateMountsAvailable() {
		return a
	}
	if a == nil {
		a = &syscall.SysProcAttr{}
	}
	// The os/exec child remounts / recursively private before exec when
	// CLONE_NEWNS is in Unshareflags.
	a.Unshareflags |= syscall.CLONE_NEWNS
	return a
}

// driverProcAttr: a driver whose raw file's server dies (SIGKILL) would go
// on serving I/O errors from a mount nobody takes down; SIGTERM at its
// parent's death makes it unmount its filesystem and exit. (The parent
// thread's death, strictly; the Go runtime does not end its threads.)
func driverProcAttr(a *syscall.SysProcAttr) *syscall.SysProcAttr {
	if a == nil {
		a = &syscall.SysProcAttr{}
	}
	a.Pdeathsig = syscall.SIGTERM
	return a
}
