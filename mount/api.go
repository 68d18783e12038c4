package mount

import (
	"errors"
	"io"
	"log"
)

// Volume is what a mount serves: the decrypted data area of an unlocked
// volume. *volume.Volume implements it.
type Volume interface {
	io.ReaderAt
	io.WriterAt
	Size() int64
	Sync() error
}

// Options tune a mount.
type Options struct {
	// ReadOnly mounts read-only (the kernel refuses writes, and so does
	// the filesystem).
	ReadOnly bool
	// FsName is shown as the mount's source in /proc/mounts and df
	// (typically the volume's path).
	FsName string
	// Container, if set, is the path of the file or device holding the
	// volume. On Linux the mount then starts the kernel's write-out of it
	// while a stream of writes goes on (see kicker), instead of leaving
	// everything to the next fsync.
	Container string
	// AllowOther lets other users see the mount (needs user_allow_other in
	// /etc/fuse.conf when not root).
	AllowOther bool
	// AllowRoot, for MountRaw, lets root in too (besides the user who
	// mounts), as a setuid-root driver stacked on the raw file needs (see
	// DriverNeedsAllowRoot); it needs user_allow_other in /etc/fuse.conf.
	AllowRoot bool
	// UID and GID own every file; -1 (or the zero Options) means the
	// mounting process's.
	UID, GID int
	// Debug logs every FUSE request to Logger.
	Debug bool
	// Logger receives diagnostics (write errors, hidden-volume protection
	// triggering); nil discards them.
	Logger *log.Logger
}

// RawFileName is the name of the one file in a raw mount.
const RawFileName = "volume"

// MaxIO is the largest read or write request asked of the kernel.
const MaxIO = 1 << 20

var (
	// ErrNotSupported is returned on platforms without FUSE support.
	ErrNotSupported = errors.New("mounting is not supported on this platform")
	// ErrNoFUSE means the platform supports FUSE but this machine lacks it
	// (no /dev/fuse, or no fusermount3 for a mount without root).
	ErrNoFUSE = errors.New("FUSE is not available")
	// ErrBusy means an unmount was refused because files in the mount are
	// in use.
	ErrBusy = errors.New("the mount is busy (files or directories in it are in use)")
	// ErrNotMounted means the directory is not a mount point.
	ErrNotMounted = errors.New("not mounted")
	// ErrNotFiles means the volume holds no filesystem a files mount
	// serves (FAT and exFAT, written in process); the error says what is
	// there. It is declared on every platform, as cmd/cryptvol tests for
	// it everywhere (the files mount itself is Linux and macOS only).
	ErrNotFiles = errors.New("no filesystem served as files")
)

func (o *Options) logf(format string, args ...any) {
	if o.Logger != nil {
		o.Logger.Printf(format, args...)
	}
}

// discard is an io.Writer for a logger that drops everything.
var discard = log.New(io.Discard, "", 0)
