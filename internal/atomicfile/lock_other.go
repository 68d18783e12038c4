//go:build !unix && !windows

package atomicfile

import "os"

// No advisory locks here: the name's PID is all there is.
func lockFile(*os.File) (func(), error) { return func() {}, nil }
func lockHeld(*os.File) bool            { return false }
func ignorableSyncError(error) bool     { return true }
