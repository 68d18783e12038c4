package mount

import (
	"os"
	"syscall"
)

// PrivateMountsAvailable reports whether a Child started with
// ChildOptions.PrivateMounts gets a mount namespace of its own. As root it
// does (CLONE_NEWNS, with every mount made private so nothing propagates
// back). Without root it would need a user namespace as well, and the
// driver does not run in one: Debian's ntfs-3g is setuid root, and in an
// unprivileged user namespace (unshare -Urm, kernel 6.18) it stops at once
// with "priv drop: setgroups failed: Operation not permitted" (setgroups is
// denied there). So an ordinary user's private mounts stay in a private
// directory, and the next command cleans up what a killed helper left
// (CleanPrivateMounts).
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
