package luks

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"fmt"

	"github.com/cryptvol/cryptvol/volume"
)

// LUKS2 binary header (LUKS2 On-Disk Format Specification, section 2): a
// 4096-byte big-endian header followed by the JSON area, hdr_size bytes in
// all, stored twice — the primary copy at 0 and the secondary at hdr_size —
// each with its own salt and a checksum over the whole copy.
const (
	binHeaderSize   = 4096
	minHeaderSize   = 16 << 10
	maxHeaderSize   = 4 << 20
	maxKeyslotsSize = 128 << 20 // cryptsetup's LUKS2_MAX_KEYSLOTS_SIZE
	labelLen        = 48
	csumAlgLen      = 32
	hdrSaltLen      = 64
	uuidLen         = 40
	csumLen         = 64
	csumOffset      = 448
)

// secondaryOffsets are where a secondary header can be, one per legal
// header size, searched when the primary is unusable.
var secondaryOffsets = []int64{16 << 10, 32 << 10, 64 << 10, 128 << 10, 256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}

// validHeaderSize reports whether n is one of LUKS2's metadata sizes
// (16 KiB to 4 MiB, powers of two).
func validHeaderSize(n uint64) bool {
	return n >= minHeaderSize && n <= maxHeaderSize && n&(n-1) == 0
}

// binHeader is one parsed binary header copy.
type binHeader struct {
	Secondary bool
	Size      uint64 // hdr_size: binary header + JSON area
	SeqID     uint64
	Label     string
	CsumAlg   string
	Salt      [hdrSaltLen]byte
	UUID      string
	Subsystem string
	Offset    uint64
}

// parseBin decodes the first 4096 bytes of a header copy found at off, with
// cryptsetup's pre-checksum sanity checks.
func parseBin(raw []byte, off int64, secondary bool) (*binHeader, error) {
	want := magic1st
	if secondary {
		want = magic2nd
	}
	if len(raw) < binHeaderSize || !bytes.Equal(raw[:6], want) {
		return nil, fmt.Errorf("no LUKS2 header magic at %d", off)
	}
	if v := binary.BigEndian.Uint16(raw[6:]); v != 2 {
		return nil, fmt.Errorf("LUKS2 header at %d has version %d", off, v)
	}
	h := &binHeader{
		Secondary: secondary,
		Size:      binary.BigEndian.Uint64(raw[8:]),
		SeqID:     binary.BigEndian.Uint64(raw[16:]),
		Label:     cString(raw[24 : 24+labelLen]),
		CsumAlg:   cString(raw[72 : 72+csumAlgLen]),
		UUID:      cString(raw[168 : 168+uuidLen]),
		Subsystem: cString(raw[208 : 208+labelLen]),
		Offset:    binary.BigEndian.Uint64(raw[256:]),
	}
	copy(h.Salt[:], raw[104:104+hdrSaltLen])
	if h.Offset != uint64(off) {
		return nil, fmt.Errorf("LUKS2 header at %d says it is at %d", off, h.Offset)
	}
	if !validHeaderSize(h.Size) {
		return nil, fmt.Errorf("LUKS2 header at %d has a bogus size %d", off, h.Size)
	}
	if secondary && h.Size != uint64(off) {
		return nil, fmt.Errorf("secondary LUKS2 header at %d has size %d", off, h.Size)
	}
	return h, nil
}

// marshalBin encodes the binary header (without checksum) into raw[:4096].
func (h *binHeader) marshalBin(raw []byte) {
	clear(raw[:binHeaderSize])
	if h.Secondary {
		copy(raw, magic2nd)
	} else {
		copy(raw, magic1st)
	}
	binary.BigEndian.PutUint16(raw[6:], 2)
	binary.BigEndian.PutUint64(raw[8:], h.Size)
	binary.BigEndian.PutUint64(raw[16:], h.SeqID)
	putCString(raw[24:24+labelLen], h.Label)
	putCString(raw[72:72+csumAlgLen], h.CsumAlg)
	copy(raw[104:], h.Salt[:])
	putCString(raw[168:168+uuidLen], h.UUID)
	putCString(raw[208:208+labelLen], h.Subsystem)
	binary.BigEndian.PutUint64(raw[256:], h.Offset)
}

// checksum computes the header checksum over a whole copy (binary header
// and JSON area) with the checksum field taken as zero.
func checksum(alg string, copyBytes []byte) ([]byte, error) {
	hs, err := lookupHash(alg)
	if err != nil {
		return nil, fmt.Errorf("%w: LUKS2 checksum algorithm %q", volume.ErrUnsupported, alg)
	}
	if hs.Size > csumLen {
		return nil, fmt.Errorf("%w: LUKS2 checksum algorithm %q is too long", volume.ErrUnsupported, alg)
	}
	var zero [csumLen]byte
	h := hs.New()
	h.Write(copyBytes[:csumOffset])
	h.Write(zero[:])
	h.Write(copyBytes[csumOffset+csumLen:])
	return h.Sum(nil), nil
}

// checksumOK verifies the stored checksum of a whole header copy.
func checksumOK(alg string, copyBytes []byte) bool {
	sum, err := checksum(alg, copyBytes)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(sum, copyBytes[csumOffset:csumOffset+len(sum)]) == 1
}

// sealCopy builds a whole header copy: binary header, JSON text padded with
// zeros to the JSON area, checksum.
func sealCopy(h *binHeader, jsonText []byte) ([]byte, error) {
	if uint64(len(jsonText)) >= h.Size-binHeaderSize {
		return nil, fmt.Errorf("%w: LUKS2 metadata of %d bytes does not fit the %d-byte JSON area",
			volume.ErrUnsupported, len(jsonText), h.Size-binHeaderSize)
	}
	buf := make([]byte, h.Size)
	h.marshalBin(buf)
	copy(buf[binHeaderSize:], jsonText)
	sum, err := checksum(h.CsumAlg, buf)
	if err != nil {
		return nil, err
	}
	copy(buf[csumOffset:], sum)
	return buf, nil
}
