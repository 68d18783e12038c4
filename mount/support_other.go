//go:build !(linux || darwin)

package mount

import (
	"fmt"
	"runtime"
)

// Supported reports why this build cannot mount: FUSE exists only on Linux
// and macOS.
func Supported() error {
	return fmt.Errorf("%w (%s/%s): use 'cryptvol ls/get/put', which need no mount", ErrNotSupported, runtime.GOOS, runtime.GOARCH)
}

// Mount is a served FUSE mount; on this platform there are none.
type Mount struct{}

// MountFiles returns ErrNotSupported on this platform.
func MountFiles(dir string, v Volume, o Options) (*Mount, error) { return nil, Supported() }

// MountRaw returns ErrNotSupported on this platform.
func MountRaw(dir string, v Volume, o Options) (*Mount, error) { return nil, Supported() }

// Dir is the mount point.
func (m *Mount) Dir() string { return "" }

// Wait returns ErrNotSupported.
func (m *Mount) Wait() error { return Supported() }

// Done is never closed.
func (m *Mount) Done() <-chan struct{} { return nil }

// Unmount returns ErrNotSupported.
func (m *Mount) Unmount() error { return Supported() }

// Shutdown returns ErrNotSupported.
func (m *Mount) Shutdown() error { return Supported() }

// OpenCount is 0.
func (m *Mount) OpenCount() int { return 0 }
