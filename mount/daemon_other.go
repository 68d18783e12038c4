//go:build !linux && !darwin

package mount

import (
	"os"
	"syscall"
)

// DetachedProcAttr returns nil: there are no mount daemons here.
func DetachedProcAttr() *syscall.SysProcAttr { return nil }

// RedirectStderr does nothing here.
func RedirectStderr(f *os.File) error { return nil }

// Terminate returns ErrNotSupported.
func Terminate(pid int) error { return Supported() }
