//go:build !windows && !(linux && cgofuse)

package cgofs

import (
	"fmt"
	"runtime"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Mount is a mounted filesystem.
type Mounted struct{}

// Available reports whether this build and machine can mount through
// cgofuse: never here.
func Available() error {
	return fmt.Errorf("%w (%s/%s)", ErrNotSupported, runtime.GOOS, runtime.GOARCH)
}

// Mount fails with ErrNotSupported.
func Mount(dir string, fsys filesystem.FS, o Options) (*Mounted, error) {
	return nil, Available()
}

// Unmount does nothing.
func (m *Mounted) Unmount() error { return Available() }

// Wait does nothing.
func (m *Mounted) Wait() error { return Available() }

// Done is never closed.
func (m *Mounted) Done() <-chan struct{} { return nil }
