package filesystem

import (
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/ext4"
	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/ntfs"
)

// Options tune Open.
type Options struct {
	// Writable asks for a Writer where the implementation can write and
	// dev is an io.WriterAt; otherwise the filesystem is opened read-only.
	Writable bool
	// NoRecovery opens a writable filesystem whose last session was
	// interrupted as it is, without recovering it first (FAT, exFAT), so
	// that a check reports what was left half-way.
	NoRecovery bool
	// FAT passes options to the FAT implementation (time zone, clock);
	// its ReadOnly and NoRecovery are set from Writable and NoRecovery.
	FAT fat.Options
}

// Open recognises the filesystem on the first size bytes of dev and opens
// it with its implementation. Errors wrap ErrUnknown (no filesystem
// recognised), ErrUnsupported (recognised, but not readable here: the
// error names it), or what the implementation's Open returned (ErrCorrupt
// and the like).
func Open(dev io.ReaderAt, size int64, opts Options) (FS, error) {
	r, err := fsprobe.Probe(dev)
	if err != nil {
		if errors.Is(err, fsprobe.ErrUnknown) {
			return nil, ErrUnknown
		}
		return nil, err
	}
	return OpenAs(r.Type, dev, size, opts)
}

// OpenAs opens dev as the filesystem typ (a Type name) without probing.
func OpenAs(typ string, dev io.ReaderAt, size int64, opts Options) (FS, error) {
	switch typ {
	case "vfat":
		o := opts.FAT
		o.ReadOnly = !opts.Writable
		o.NoRecovery = o.NoRecovery || opts.NoRecovery
		f, err := fat.OpenWithOptions(dev, size, o)
		if err != nil {
			return nil, classify(err, fatErrors)
		}
		return &fatFS{f}, nil
	case "ext2", "ext3", "ext4":
		if w, ok := dev.(interface {
			io.ReaderAt
			io.WriterAt
		}); ok && opts.Writable {
			// The in-process writer: a journal that needs recovery is
			// replayed first, and every change is a journal transaction.
			return OpenExt4Writable(w, size)
		}
		f, err := ext4.Open(dev, size)
		if err != nil {
			return nil, classify(err, ext4Errors)
		}
		return &extFS{f}, nil
	case "ntfs":
		f, err := ntfs.Open(dev, size)
		if err != nil {
			return nil, classify(err, ntfsErrors)
		}
		return &ntfsFS{f}, nil
	case "exfat":
		f, err := exfat.OpenWithOptions(dev, size, exfat.Options{ReadOnly: !opts.Writable, NoRecovery: opts.NoRecovery})
		if err != nil {
			return nil, classify(err, exfatErrors)
		}
		return &exfatFS{f}, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnsupported, typ)
}
