//go:build !unix

package atomicfile

// ignorableSyncError: directories cannot be synced here.
func ignorableSyncError(error) bool { return true }
