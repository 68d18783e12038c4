//go:build linux && cgofuse

package cgofs

import (
	"fmt"
	"os"
	"path/filepath"
)

// Available reports whether libfuse can mount here: /dev/fuse, and the
// shared library cgofuse opens at run time (libfuse3.so.3 with the fuse3
// tag, libfuse.so.2 without).
func Available() error {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: no /dev/fuse", ErrNotInstalled)
	}
	for _, d := range []string{"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu"} {
		if _, err := os.Stat(filepath.Join(d, libfuseName)); err == nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %s not found (install the package %s)", ErrNotInstalled, libfuseName, libfusePkg)
}
