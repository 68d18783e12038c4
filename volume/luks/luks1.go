package luks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/cryptvol/cryptvol/volume"
)

// LUKS1 on-disk header (LUKS1 On-Disk Format Specification 1.2.3): a
// 592-byte big-endian structure at offset 0, eight keyslot descriptors in
// it, key material in 512-byte sectors after it.
const (
	luks1HeaderSize = 592
	luks1NumKeys    = 8
	luks1Stripes    = 4000
	luks1DigestSize = 20
	luks1SaltSize   = 32
	// luks1SlotEnabled and luks1SlotDisabled are the keyslot "active" marks.
	luks1SlotEnabled  = 0x00AC71F3
	luks1SlotDisabled = 0x0000DEAD
	// luks1AlignKeyslots is where cryptsetup ≥ 1.1 puts the first keyslot
	// and the alignment of the others (cryptsetup 1.0 used 512).
	luks1AlignKeyslots = 4096
)

var (
	magic1st = []byte{'L', 'U', 'K', 'S', 0xba, 0xbe}
	magic2nd = []byte{'S', 'K', 'U', 'L', 0xba, 0xbe}
)

// luks1Slot is one keyslot descriptor.
type luks1Slot struct {
	Active     uint32
	Iterations uint32
	Salt       [luks1SaltSize]byte
	Offset     uint32 // key material start, in 512-byte sectors
	Stripes    uint32
}

// luks1Header is the parsed LUKS1 header.
type luks1Header struct {
	CipherName   string
	CipherMode   string
	HashSpec     string
	PayloadOff   uint32 // data start in 512-byte sectors (0: detached header)
	KeyBytes     uint32
	MKDigest     [luks1DigestSize]byte
	MKDigestSalt [luks1SaltSize]byte
	MKDigestIter uint32
	UUID         string
	Slots        [luks1NumKeys]luks1Slot

	spec    CipherSpec
	specErr error // why the cipher cannot be used (checked at unlock)
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// putCString writes s NUL-terminated into dst; a string that fills the
// whole field (read so from a header whose field had no NUL) is written
// back as it was, so that rewriting a header keeps every byte of its
// fields (FuzzLUKS1Header found a 40-byte UUID losing its last byte).
func putCString(dst []byte, s string) {
	clear(dst)
	if len(s) == len(dst) {
		copy(dst, s)
		return
	}
	copy(dst[:len(dst)-1], s)
}

// parseLUKS1 decodes and validates the header in raw (≥ 592 bytes) for a
// header device of devSize bytes, with cryptsetup's checks: known hash,
// stripes 4000, keyslots inside the header area and not overlapping, the
// payload after every keyslot, the device big enough for all keyslots.
func parseLUKS1(raw []byte, devSize int64) (*luks1Header, error) {
	if len(raw) < luks1HeaderSize || !bytes.Equal(raw[:6], magic1st) {
		return nil, fmt.Errorf("%w: no LUKS header", volume.ErrWrongPassword)
	}
	if v := binary.BigEndian.Uint16(raw[6:]); v != 1 {
		return nil, fmt.Errorf("%w: LUKS version %d header where version 1 was expected", volume.ErrUnsupported, v)
	}
	h := &luks1Header{
		CipherName:   cString(raw[8:40]),
		CipherMode:   cString(raw[40:72]),
		HashSpec:     cString(raw[72:104]),
		PayloadOff:   binary.BigEndian.Uint32(raw[104:]),
		KeyBytes:     binary.BigEndian.Uint32(raw[108:]),
		MKDigestIter: binary.BigEndian.Uint32(raw[164:]),
		UUID:         cString(raw[168:208]),
	}
	copy(h.MKDigest[:], raw[112:132])
	copy(h.MKDigestSalt[:], raw[132:164])
	for i := range h.Slots {
		p := raw[208+48*i:]
		s := &h.Slots[i]
		s.Active = binary.BigEndian.Uint32(p)
		s.Iterations = binary.BigEndian.Uint32(p[4:])
		copy(s.Salt[:], p[8:40])
		s.Offset = binary.BigEndian.Uint32(p[40:])
		s.Stripes = binary.BigEndian.Uint32(p[44:])
	}
	if err := h.validate(devSize); err != nil {
		return nil, err
	}
	return h, nil
}

func (h *luks1Header) validate(devSize int64) error {
	hs, err := lookupHash(h.HashSpec)
	if err != nil || hs.Size < luks1DigestSize {
		return fmt.Errorf("%w: LUKS1 hash %q is not supported", volume.ErrUnsupported, h.HashSpec)
	}
	if h.KeyBytes == 0 || h.KeyBytes > 512 {
		return fmt.Errorf("%w: LUKS1 key size of %d bytes", volume.ErrDamaged, h.KeyBytes)
	}
	if h.MKDigestIter == 0 {
		return fmt.Errorf("%w: LUKS1 master key digest has 0 iterations", volume.ErrDamaged)
	}
	perSlot := afSectors(int(h.KeyBytes), luks1Stripes)
	order := h.slotsByOffset()
	for i, s := range h.Slots {
		if s.Stripes != luks1Stripes {
			return fmt.Errorf("%w: LUKS keyslot %d is invalid (%d stripes, LUKS1 uses %d)", volume.ErrDamaged, i, s.Stripes, luks1Stripes)
		}
		if int64(s.Offset)*512 < luks1HeaderSize {
			return fmt.Errorf("%w: LUKS keyslot %d is invalid (key material inside the header)", volume.ErrDamaged, i)
		}
		if h.PayloadOff == 0 {
			continue // detached header: no payload to collide with
		}
		if int64(h.PayloadOff) < int64(s.Offset)+perSlot {
			return fmt.Errorf("%w: LUKS keyslot %d is invalid (its key material runs into the data area at sector %d)",
				volume.ErrDamaged, i, h.PayloadOff)
		}
	}
	for i := 1; i < len(order); i++ {
		prev, next := order[i-1], order[i]
		if int64(h.Slots[next].Offset) < int64(h.Slots[prev].Offset)+perSlot {
			return fmt.Errorf("%w: LUKS keyslot %d is invalid (its key material overlaps keyslot %d)", volume.ErrDamaged, prev, next)
		}
	}
	if end := h.areaEnd(); end > devSize {
		return fmt.Errorf("%w: device is too small: LUKS1 with these keyslots needs at least %d bytes, it has %d",
			volume.ErrDamaged, end, devSize)
	}
	return nil
}

// slotsByOffset lists the keyslot numbers in key-material order.
func (h *luks1Header) slotsByOffset() []int {
	order := []int{0, 1, 2, 3, 4, 5, 6, 7}
	sort.SliceStable(order, func(a, b int) bool { return h.Slots[order[a]].Offset < h.Slots[order[b]].Offset })
	return order
}

// areaEnd is the end of the header and keyslot area in bytes.
func (h *luks1Header) areaEnd() int64 {
	last := h.slotsByOffset()[luks1NumKeys-1]
	return (int64(h.Slots[last].Offset) + afSectors(int(h.KeyBytes), luks1Stripes)) * 512
}

// firstSlotOffset is the byte offset of the lowest keyslot's material.
func (h *luks1Header) firstSlotOffset() int64 {
	return int64(h.Slots[h.slotsByOffset()[0]].Offset) * 512
}

// slotMaterial is the byte range of a keyslot's key material.
func (h *luks1Header) slotMaterial(i int) (off, n int64) {
	return int64(h.Slots[i].Offset) * 512, afSectors(int(h.KeyBytes), luks1Stripes) * 512
}

// cipherSpec parses the header's cipher name and mode.
func (h *luks1Header) cipherSpec() (CipherSpec, error) {
	s, err := ParseCipherSpec(h.CipherName + "-" + h.CipherMode)
	if err != nil {
		return s, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	if err := s.Check(int(h.KeyBytes)); err != nil {
		return s, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	return s, nil
}

// marshal encodes the header into its 592 bytes.
func (h *luks1Header) marshal() []byte {
	raw := make([]byte, luks1HeaderSize)
	copy(raw, magic1st)
	binary.BigEndian.PutUint16(raw[6:], 1)
	putCString(raw[8:40], h.CipherName)
	putCString(raw[40:72], h.CipherMode)
	putCString(raw[72:104], h.HashSpec)
	binary.BigEndian.PutUint32(raw[104:], h.PayloadOff)
	binary.BigEndian.PutUint32(raw[108:], h.KeyBytes)
	copy(raw[112:132], h.MKDigest[:])
	copy(raw[132:164], h.MKDigestSalt[:])
	binary.BigEndian.PutUint32(raw[164:], h.MKDigestIter)
	putCString(raw[168:208], h.UUID)
	for i, s := range h.Slots {
		p := raw[208+48*i:]
		binary.BigEndian.PutUint32(p, s.Active)
		binary.BigEndian.PutUint32(p[4:], s.Iterations)
		copy(p[8:40], s.Salt[:])
		binary.BigEndian.PutUint32(p[40:], s.Offset)
		binary.BigEndian.PutUint32(p[44:], s.Stripes)
	}
	return raw
}

// readLUKS1 reads and validates the LUKS1 header of dev.
func readLUKS1(dev volume.Device) (*luks1Header, error) {
	if dev.Size() < luks1HeaderSize {
		return nil, fmt.Errorf("%w: the device is smaller than a LUKS header", volume.ErrDamaged)
	}
	raw, err := readAt(dev, 0, luks1HeaderSize)
	if err != nil {
		return nil, err
	}
	h, err := parseLUKS1(raw, dev.Size())
	if err != nil {
		return nil, err
	}
	h.spec, h.specErr = h.cipherSpec()
	return h, nil
}
