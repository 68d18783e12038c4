package filesystem

import "fmt"

// FreeTail returns the run of free space at the end of fsys, opened
// read-only over a device of size bytes: bytes [start, end) of the device
// hold nothing of the filesystem (no file, directory, journal or metadata
// copy), so a hidden volume placed there leaves every file of the outer
// one intact, as long as nothing more is written to it. Each
// implementation reads its own allocation map: FAT's table, exFAT's
// allocation bitmap, NTFS's $Bitmap (end stops before its backup boot
// sector), ext4's block bitmaps (uninitialised ones computed). A
// filesystem that cannot say (or a writable ext4, whose bitmaps in memory
// run ahead of the device's) gives ErrUnsupported.
func FreeTail(fsys FS, size int64) (start, end int64, err error) {
	switch f := fsys.(type) {
	case *fatFS:
		return f.f.UsedEnd(), size, nil
	case *exfatFS:
		return f.f.UsedEnd(), size, nil
	case *extFS:
		start, err := f.f.UsedEnd()
		return start, size, classify(err, ext4Errors)
	case *ntfsFS:
		start, end, err := f.f.FreeTail()
		return start, min(end, size), classify(err, ntfsErrors)
	}
	return 0, 0, fmt.Errorf("%w: the free space at the end of a %s filesystem", ErrUnsupported, fsys.Type())
}
