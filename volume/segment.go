package volume

import (
	"errors"
	"fmt"
	"io"
	"sort"
)

// Segment is one contiguous piece of a data area whose sectors are not
// where a single run would put them. BitLocker needs three kinds: its
// first sectors relocated (read from elsewhere on the device, with that
// place's IVs), its metadata blocks shown as zeros, and the rest encrypted
// in place. A driver that lists segments describes the whole data area
// with them, in order, as dm-crypt and dm-zero targets would.
type Segment struct {
	// Offset and Size locate the segment in the data area, in bytes;
	// both are multiples of the sector size.
	Offset, Size int64
	// Zero segments read as zero bytes and hold nothing: a write of
	// anything but zeros into one is refused with ErrReserved.
	Zero bool
	// DevOffset is where the segment's encrypted sectors start on the
	// device; FirstSector is the IV/tweak number of its first sector.
	DevOffset   int64
	FirstSector uint64
	// Name says what the segment is, for error messages ("BitLocker
	// metadata block 1").
	Name string
}

func (s *Segment) end() int64 { return s.Offset + s.Size }

// layoutSegments returns the segments of u's data area, checked: one for
// a plain data area, or the driver's list.
func layoutSegments(u *Unlocked, ss int64, dev Device, o Options) ([]Segment, error) {
	if len(u.Segments) == 0 {
		return []Segment{{Size: u.DataSize, DevOffset: u.DataOffset, FirstSector: u.FirstSector}}, nil
	}
	segs := append([]Segment(nil), u.Segments...)
	at := int64(0)
	for i, s := range segs {
		if s.Offset != at || s.Size <= 0 || s.Size%ss != 0 || s.DevOffset < 0 {
			return nil, fmt.Errorf("%w: segment %d (%d bytes at %d) does not follow the one before it in %d-byte sectors", ErrDamaged, i, s.Size, s.Offset, ss)
		}
		if !s.Zero && s.DevOffset+s.Size > dev.Size() {
			o.warn(fmt.Sprintf("%s ends %d bytes beyond the end of the file: the container is truncated", segmentName(&s), s.DevOffset+s.Size-dev.Size()))
		}
		at = s.end()
	}
	if at != u.DataSize {
		return nil, fmt.Errorf("%w: the segments cover %d bytes of a %d-byte data area", ErrDamaged, at, u.DataSize)
	}
	return segs, nil
}

func segmentName(s *Segment) string {
	if s.Name != "" {
		return s.Name
	}
	return fmt.Sprintf("the segment at %d", s.Offset)
}

// segmentAt returns the segment holding data-area offset pos (< size).
func (v *Volume) segmentAt(pos int64) *Segment {
	if len(v.segs) == 1 {
		return &v.segs[0]
	}
	i := sort.Search(len(v.segs), func(i int) bool { return v.segs[i].end() > pos })
	return &v.segs[i]
}

// readSectors reads and decrypts whole sectors at data-area offset pos,
// segment by segment.
func (v *Volume) readSectors(dst []byte, pos int64) error {
	for len(dst) > 0 {
		s := v.segmentAt(pos)
		rel := pos - s.Offset
		n := int(min(int64(len(dst)), s.Size-rel))
		if s.Zero {
			clear(dst[:n])
		} else {
			got, err := v.dev.ReadAt(dst[:n], s.DevOffset+rel)
			if got < n {
				if err == nil || errors.Is(err, io.EOF) {
					err = fmt.Errorf("%w: the container file ends inside the data area (truncated)", ErrDamaged)
				}
				return err
			}
			v.mode.Decrypt(dst[:n], dst[:n], s.FirstSector+uint64(rel/v.ss))
		}
		dst, pos = dst[n:], pos+int64(n)
	}
	return nil
}

// storeSectors encrypts whole sectors of src into buf (which may be src)
// and writes them at data-area offset pos, skipping zero segments (WriteAt
// checked that only zeros land there).
func (v *Volume) storeSectors(buf, src []byte, pos int64) error {
	for len(src) > 0 {
		s := v.segmentAt(pos)
		rel := pos - s.Offset
		n := int(min(int64(len(src)), s.Size-rel))
		if !s.Zero {
			v.mode.Encrypt(buf[:n], src[:n], s.FirstSector+uint64(rel/v.ss))
			if _, err := v.dev.WriteAt(buf[:n], s.DevOffset+rel); err != nil {
				return err
			}
		}
		buf, src, pos = buf[n:], src[n:], pos+int64(n)
	}
	if !v.unsynced.Load() {
		v.unsynced.Store(true) // after the write: a Sync that cleared it before covers it
	}
	return nil
}

// checkReserved refuses a write of p at off that would put anything but
// zeros into a zero segment, before anything is written.
func (v *Volume) checkReserved(p []byte, off int64) error {
	if len(v.segs) == 1 {
		return nil
	}
	end := off + int64(len(p))
	for i := range v.segs {
		s := &v.segs[i]
		if !s.Zero || s.end() <= off || s.Offset >= end {
			continue
		}
		lo, hi := max(s.Offset, off), min(s.end(), end)
		for _, b := range p[lo-off : hi-off] {
			if b != 0 {
				return fmt.Errorf("%w: bytes %d to %d are %s, which the volume shows as zeros", ErrReserved, s.Offset, s.end()-1, segmentName(s))
			}
		}
	}
	return nil
}
