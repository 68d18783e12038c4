package filesystem

import (
	"io"

	"github.com/cryptvol/cryptvol/fsprobe"
)

// TailRoom is the free run at the end of the filesystem in a data area:
// where a hidden volume may go without covering anything of it.
type TailRoom struct {
	// Type is the filesystem as fsprobe names it ("vfat", "ntfs", ...),
	// "" when none is recognised.
	Type string
	// Start and End bound the free bytes [Start, End) of the data area.
	Start, End int64
}

// FindTailRoom opens the filesystem in data (size bytes) read-only and
// reads its free tail with FreeTail. The error wraps ErrUnknown when no
// filesystem is recognised; Type is set whenever fsprobe recognises one,
// with an error too (a filesystem whose free space cannot be read).
func FindTailRoom(data io.ReaderAt, size int64) (TailRoom, error) {
	var r TailRoom
	if p, err := fsprobe.Probe(data); err == nil {
		r.Type = p.Type
	}
	fsys, err := Open(data, size, Options{})
	if err != nil {
		return r, err
	}
	defer fsys.Close()
	r.Start, r.End, err = FreeTail(fsys, size)
	return r, err
}

// Fit reports whether bytes [start, end) of the data area lie in the
// room, and the most bytes a span ending at end may have there: the
// whole span when it fits, 0 when end is past the room.
func (r TailRoom) Fit(start, end int64) (fits bool, largest int64) {
	switch {
	case start >= r.Start && end <= r.End:
		return true, end - start
	case end > r.End:
		return false, 0
	}
	return false, max(end-r.Start, 0)
}
