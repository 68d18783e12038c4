//go:build !linux

package diskio

import "os"

// DropCache writes f's dirty pages; it cannot evict pages here, so reads
// may come from memory.
func DropCache(f *os.File) { f.Sync() }

// allocate sets f's size (no fallocate here).
func allocate(f *os.File, size int64) error { return f.Truncate(size) }
