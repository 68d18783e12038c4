package cgofs

import (
	"errors"
	"log"
	"runtime"
)

// Options tune a Mount.
type Options struct {
	// ReadOnly refuses every change (and the filesystem is opened
	// read-only by the caller).
	ReadOnly bool
	// FsName names the mount (WinFsp shows it as the volume's name).
	FsName string
	// UID and GID own every file where the system shows owners; -1 or 0
	// means the mounting user.
	UID, GID int
	// Debug asks the FUSE layer to log every request (to stderr).
	Debug bool
	// Logger receives write errors and other diagnostics; nil drops them.
	Logger *log.Logger
}

var (
	// ErrNotSupported means this build has no cgofuse binding (not
	// Windows, and not Linux built with the cgofuse tag).
	ErrNotSupported = errors.New("the cgofuse front end is not built for this platform")
	// ErrNotInstalled means the FUSE layer is not installed: WinFsp on
	// Windows, libfuse on Linux.
	ErrNotInstalled = errors.New("the FUSE layer is not installed")
)

// Layer names the FUSE layer cgofuse drives here: WinFsp on Windows,
// libfuse elsewhere (the Linux test build).
func Layer() string {
	if runtime.GOOS == "windows" {
		return "WinFsp"
	}
	return "libfuse (cgofuse)"
}
