//go:build !linux && !darwin

package mount

import "os"

// Available returns ErrNotSupported: no FUSE on this platform.
func Available() error { return Supported() }

// Unmount returns ErrNotSupported.
func Unmount(dir string, lazy bool) error { return Supported() }

// MountPoint is one entry of the system's mount table.
type MountPoint struct {
	Dir    string
	FSType string
	Source string
}

// MountPoints lists nothing here.
func MountPoints() ([]MountPoint, error) { return nil, nil }

// ProcessAlive reports whether pid is running.
func ProcessAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}

func redirectStderr(f *os.File) error { return nil }

// SyncAll does nothing here.
func SyncAll() {}

func allocate(f *os.File, size int64) error { return f.Truncate(size) }
