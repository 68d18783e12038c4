package luks

import (
	"fmt"
	"strconv"

	"github.com/cryptvol/cryptvol/volume"
)

// DataLayout says where the data area of the LUKS volume on dev lies:
// its offset, and its size when the header fixes one (LUKS2 with a
// numeric segment size; 0 when it runs to the end of the device: LUKS1,
// and LUKS2's "dynamic").
func DataLayout(dev volume.Device) (offset, fixedSize int64, err error) {
	l, err := load(dev, "luks")
	if err != nil {
		return 0, 0, err
	}
	if l.v1 != nil {
		return int64(l.v1.PayloadOff) * 512, 0, nil
	}
	seg, err := l.v2.dataSegment()
	if err != nil {
		return 0, 0, err
	}
	return seg.Offset, seg.Size, nil
}

// SetDataSize rewrites a LUKS2 header whose data segment has a fixed
// size so that it says size bytes (both header copies, the sequence id
// one up, as every LUKS2 header change). A segment that runs to the end
// of the device (LUKS1, "dynamic") stays as it is: its size follows the
// file's, and SetDataSize changes nothing. The data keys are untouched.
func SetDataSize(dev volume.Device, size int64) error { return setSegmentSize(dev, size, false) }

// setSegmentSize is SetDataSize; fix also fixes the size of a dynamic
// segment (tests make such volumes, which cryptsetup luksFormat cannot).
func setSegmentSize(dev volume.Device, size int64, fix bool) error {
	l, err := load(dev, "luks")
	if err != nil {
		return err
	}
	if l.v1 != nil {
		return nil
	}
	if err := checkWritable(l); err != nil {
		return err
	}
	seg, err := l.v2.dataSegment()
	if err != nil {
		return err
	}
	if (seg.Size == 0 && !fix) || seg.Size == size {
		return nil
	}
	if size <= 0 || size%int64(seg.SectorSize) != 0 {
		return fmt.Errorf("%w: a data segment of %d bytes (want a positive multiple of its %d-byte sectors)", volume.ErrUnsupported, size, seg.SectorSize)
	}
	raw, ok := deepCopy(l.v2.meta.raw).(map[string]any)
	if !ok {
		return fmt.Errorf("%w: LUKS2 metadata is not an object", volume.ErrDamaged)
	}
	s := object(object(raw, "segments"), seg.ID)
	if s == nil {
		return fmt.Errorf("%w: LUKS2 segment %s", volume.ErrDamaged, seg.ID)
	}
	s["size"] = strconv.FormatInt(size, 10)
	meta, err := (&metadata{raw: raw}).reparse(l.v2.bin.Size)
	if err != nil {
		return err
	}
	g, err := watch(dev, l)
	if err != nil {
		return err
	}
	return commitLUKS2(g, l.v2, meta, nil, false)
}
