package filesystem

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
)

// Making, shrinking and measuring filesystems: what create, format and
// reencrypt --encrypt ask of the filesystem layer, whichever filesystem
// it is, so that front ends never import an implementation (issue 26).

// FormatOptions say what Format makes.
type FormatOptions struct {
	// Type is "fat" (FAT12, FAT16 or FAT32 chosen by size, as mkfs.fat
	// does), "fat12", "fat16", "fat32", "exfat" or "ext4".
	Type string
	// Label is the volume label ("" for none).
	Label string
	// Serial is the volume serial number of FAT and exFAT; 0 picks a
	// random one.
	Serial uint32
	// MinBlockSize is the smallest block ext4 may use (mkfs.ext4 -b):
	// the volume's sector size where it is larger than 1 KiB.
	MinBlockSize int
}

// Formattable lists the types Format makes.
var Formattable = []string{"fat", "fat12", "fat16", "fat32", "exfat", "ext4"}

// Format writes a new, empty filesystem over the first size bytes of dev:
// what the filesystem's own mkfs makes for that size. The note says where
// it had to differ ("" when it did not): below about 3 MiB mkfs.exfat
// refuses its 1 MiB alignment, and the largest that fits is used, as
// mkfs.exfat -b would. Errors wrap ErrTooSmall and ErrInvalidName (a
// label the filesystem cannot store).
func Format(dev interface {
	io.ReaderAt
	io.WriterAt
}, size int64, o FormatOptions) (note string, err error) {
	switch t := strings.ToLower(o.Type); t {
	case "fat", "vfat", "fat12", "fat16", "fat32":
		fo := fat.FormatOptions{Label: o.Label, Serial: o.Serial}
		fo.Type = map[string]fat.Type{"fat12": fat.FAT12, "fat16": fat.FAT16, "fat32": fat.FAT32}[t] // TypeAuto otherwise
		return "", classify(fat.Format(dev, size, fo), fatFormatErrors)
	case "exfat":
		eo := exfat.FormatOptions{Label: o.Label, Serial: o.Serial}
		err := exfat.Format(dev, size, eo)
		for eo.Align = 512 << 10; errors.Is(err, exfat.ErrTooSmall) && eo.Align >= 4096; eo.Align /= 2 {
			if err = exfat.Format(dev, size, eo); err == nil {
				note = fmt.Sprintf("exFAT aligned to %d bytes (the volume is too small for mkfs.exfat's 1 MiB; what mkfs.exfat -b %d makes)", eo.Align, eo.Align)
			}
		}
		return note, classify(err, exfatFormatErrors)
	case "ext4":
		return "", FormatExt4(dev, size, o.Label, o.MinBlockSize)
	}
	return "", fmt.Errorf("%w: cannot make a %q filesystem (want one of %s)", ErrUnsupported, o.Type, strings.Join(Formattable, ", "))
}

// At format time, too small is about the size asked for, not a damaged
// filesystem.
var (
	fatFormatErrors   = []errorPair{{fat.ErrTooSmall, ErrTooSmall}, {fat.ErrInvalidName, ErrInvalidName}}
	exfatFormatErrors = []errorPair{{exfat.ErrTooSmall, ErrTooSmall}, {exfat.ErrInvalidName, ErrInvalidName}}
)

// ErrCannotShrink means the filesystem cannot be made as small as asked
// (files lie beyond the new end, or its type would have to change).
var ErrCannotShrink = errors.New("cannot shrink the filesystem")

// Shrink lowers the size the filesystem of type typ on dev (size bytes)
// declares to at most newSize bytes, giving up free space at its end, and
// returns the size it declares now. FAT is the filesystem it can shrink;
// others fail with ErrUnsupported.
func Shrink(typ string, dev interface {
	io.ReaderAt
	io.WriterAt
}, size, newSize int64) (int64, error) {
	if typ != "vfat" {
		return 0, fmt.Errorf("%w: shrinking %s", ErrUnsupported, typ)
	}
	got, err := fat.Shrink(dev, size, newSize)
	return got, classify(err, []errorPair{{fat.ErrCannotShrink, ErrCannotShrink}})
}

// UsedEnder is an FS that knows where its last byte in use lies (FAT): a
// hidden volume placed after it leaves every file of the outer one
// intact.
type UsedEnder interface {
	UsedEnd() int64
}

func (f *fatFS) UsedEnd() int64 { return f.f.UsedEnd() }
