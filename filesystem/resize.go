package filesystem

import (
	"io"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
)

// Resizable reports whether Resize can grow and shrink filesystems of
// type typ (fsprobe's names) in process.
func Resizable(typ string) bool { return typ == "vfat" || typ == "exfat" }

// Resize makes the filesystem of type typ on dev (size bytes, at least
// newSize) declare at most newSize bytes and returns the size it declares
// now: a shrink gives up free space at its end (ErrCannotShrink when
// files lie there), a grow takes as much of the space up to newSize as
// the filesystem's metadata has room for without moving anything (FAT:
// the room in its FATs; exFAT: in its FAT and allocation bitmap). Other
// filesystems fail with ErrUnsupported.
func Resize(typ string, dev interface {
	io.ReaderAt
	io.WriterAt
}, size, newSize int64) (int64, error) {
	switch typ {
	case "vfat":
		got, err := fat.Shrink(dev, size, newSize)
		if err == nil && got < newSize {
			got, err = fat.Grow(dev, newSize)
		}
		return got, classify(err, []errorPair{{fat.ErrCannotShrink, ErrCannotShrink}})
	case "exfat":
		got, err := exfat.Resize(dev, size, newSize)
		return got, classify(err, []errorPair{{exfat.ErrCannotShrink, ErrCannotShrink}, {exfat.ErrUnsupported, ErrUnsupported}})
	}
	return Shrink(typ, dev, size, newSize)
}
