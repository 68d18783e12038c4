package mount

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Available reports whether FUSE can be used here: nil, or an error
// wrapping ErrNoFUSE that says what is missing.
func Available() error {
	for _, p := range []string{"/Library/Filesystems/macfuse.fs", "/Library/Filesystems/osxfuse.fs"} {
		if _, err := os.Stat(p); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: install macFUSE (https://macfuse.github.io)", ErrNoFUSE)
}

// Unmount unmounts the filesystem at dir; lazy forces it (MNT_FORCE) even
// when busy. Errors wrap ErrBusy or ErrNotMounted where they mean that.
func Unmount(dir string, lazy bool) error {
	flags := 0
	if lazy {
		flags = unix.MNT_FORCE
	}
	return unmountError(dir, unix.Unmount(dir, flags))
}

// MountPoint is one entry of the system's mount table.
type MountPoint struct {
	Dir    string
	FSType string
	Source string
}

// MountPoints lists the mounted filesystems.
func MountPoints() ([]MountPoint, error) {
	n, err := unix.Getfsstat(nil, unix.MNT_NOWAIT)
	if err != nil {
		return nil, err
	}
	buf := make([]unix.Statfs_t, n+8)
	n, err = unix.Getfsstat(buf, unix.MNT_NOWAIT)
	if err != nil {
		return nil, err
	}
	out := make([]MountPoint, 0, n)
	for _, s := range buf[:n] {
		out = append(out, MountPoint{
			Dir:    unix.ByteSliceToString(s.Mntonname[:]),
			FSType: unix.ByteSliceToString(s.Fstypename[:]),
			Source: unix.ByteSliceToString(s.Mntfromname[:]),
		})
	}
	return out, nil
}

// ProcessAlive reports whether pid is a running process.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func redirectStderr(f *os.File) error {
	return unix.Dup2(int(f.Fd()), 2)
}

// readOnlyMountFlags is unused on macOS (mounts go through mount_macfuse).
func readOnlyMountFlags() uintptr { return 0 }

// SyncAll asks the kernel to write every dirty buffer (sync(2)).
func SyncAll() { unix.Sync() }

// tuneReadAhead does nothing on macOS.
func tuneReadAhead(dir string) {}

func allocate(f *os.File, size int64) error { return f.Truncate(size) }

// closeFUSEOnExec: go-fuse marks the descriptor it gets from the mount
// helper close-on-exec itself on macOS (there is no direct mount).
func closeFUSEOnExec() {}
