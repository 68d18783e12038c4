//go:build !linux

package mount

import "syscall"

// PrivateMountsAvailable is false: mount namespaces are Linux's.
func PrivateMountsAvailable() bool { return false }

func privateMountsProcAttr(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }

func driverProcAttr(a *syscall.SysProcAttr) *syscall.SysProcAttr { return a }
