package filesystem

import "io"

// Resizable reports whether Resize can grow and shrink filesystems of
// type typ (fsprobe's names) in process.
func Resizable(typ string) bool { return false }

// Resize makes the filesystem of type typ on dev (size bytes, at least
// newSize) declare at most newSize bytes and returns the size it declares
// now. Today it shrinks FAT (Shrink); others fail with ErrUnsupported.
func Resize(typ string, dev interface {
	io.ReaderAt
	io.WriterAt
}, size, newSize int64) (int64, error) {
	return Shrink(typ, dev, size, newSize)
}
