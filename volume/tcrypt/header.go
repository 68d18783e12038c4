package tcrypt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"
)

// On-disk layout of a TrueCrypt/VeraCrypt volume header (512 bytes): a
// 64-byte salt in the clear, then 448 bytes encrypted with the header key.
// All integers are big-endian.
const (
	headerSize    = 512
	saltSize      = 64
	encryptedSize = headerSize - saltSize // 448
	headerKeySize = 192                   // bytes of header key the KDF derives
	keysOffset    = 192                   // master key area, within the decrypted part
	keysSize      = 256
	headerCRCSpan = 188 // bytes covered by the header CRC (magic .. reserved)

	// Header positions (byte offsets; negative ones count from the end).
	offNormal        = 0
	offHidden        = 65536
	offHiddenLegacy  = -1536 // TrueCrypt ≤ 5: hidden header near the end
	offBackupNormal  = -131072
	offBackupHidden  = -65536
	offSystem        = 31744 // sector 62 of the boot drive
	headerGroupSize  = 131072
	dataUnitSize     = 512 // XTS data unit, whatever the device sector size
	legacyDataOffset = 512 // TrueCrypt 4.x/5.x data starts after one header sector

	flagSystem    = 1 << 0
	flagNonSystem = 1 << 1
)

// header is the decrypted part of a volume header.
type header struct {
	Magic        string // "TRUE" or "VERA"
	Version      uint16 // header format version
	MinVersion   uint16 // minimum program version, BCD-ish (0x010b = 1.11)
	KeysCRC      uint32
	HiddenSize   uint64 // size of the hidden volume (set in hidden headers)
	VolumeSize   uint64
	EncStart     uint64 // byte offset of the encrypted area ("master key offset")
	EncSize      uint64
	Flags        uint32
	SectorSize   uint32
	HeaderCRC    uint32
	Keys         [keysSize]byte
	CreationTime uint64
	ModifyTime   uint64
}

// parseHeader checks the magic and CRCs of a decrypted header (the 448
// bytes after the salt) and decodes it. It reports false when the bytes are
// not a header decrypted with the right key.
func parseHeader(d []byte) (*header, bool) {
	if len(d) != encryptedSize {
		return nil, false
	}
	magic := string(d[0:4])
	if magic != "TRUE" && magic != "VERA" {
		return nil, false
	}
	h := &header{
		Magic:        magic,
		Version:      binary.BigEndian.Uint16(d[4:]),
		MinVersion:   binary.BigEndian.Uint16(d[6:]),
		KeysCRC:      binary.BigEndian.Uint32(d[8:]),
		CreationTime: binary.BigEndian.Uint64(d[12:]),
		ModifyTime:   binary.BigEndian.Uint64(d[20:]),
		HiddenSize:   binary.BigEndian.Uint64(d[28:]),
		VolumeSize:   binary.BigEndian.Uint64(d[36:]),
		EncStart:     binary.BigEndian.Uint64(d[44:]),
		EncSize:      binary.BigEndian.Uint64(d[52:]),
		Flags:        binary.BigEndian.Uint32(d[60:]),
		SectorSize:   binary.BigEndian.Uint32(d[64:]),
		HeaderCRC:    binary.BigEndian.Uint32(d[188:]),
	}
	copy(h.Keys[:], d[keysOffset:])
	if crc32.ChecksumIEEE(d[keysOffset:]) != h.KeysCRC {
		return nil, false
	}
	// Header versions ≥ 4 (TrueCrypt 6.0+) also protect the fields.
	if h.Version >= 4 && crc32.ChecksumIEEE(d[:headerCRCSpan]) != h.HeaderCRC {
		return nil, false
	}
	if h.SectorSize == 0 {
		h.SectorSize = 512
	}
	return h, true
}

// marshal encodes the header into the 448-byte plaintext form, computing
// both CRCs.
func (h *header) marshal() []byte {
	d := make([]byte, encryptedSize)
	copy(d[0:4], h.Magic)
	binary.BigEndian.PutUint16(d[4:], h.Version)
	binary.BigEndian.PutUint16(d[6:], h.MinVersion)
	binary.BigEndian.PutUint64(d[12:], h.CreationTime)
	binary.BigEndian.PutUint64(d[20:], h.ModifyTime)
	binary.BigEndian.PutUint64(d[28:], h.HiddenSize)
	binary.BigEndian.PutUint64(d[36:], h.VolumeSize)
	binary.BigEndian.PutUint64(d[44:], h.EncStart)
	binary.BigEndian.PutUint64(d[52:], h.EncSize)
	binary.BigEndian.PutUint32(d[60:], h.Flags)
	binary.BigEndian.PutUint32(d[64:], h.SectorSize)
	copy(d[keysOffset:], h.Keys[:])
	binary.BigEndian.PutUint32(d[8:], crc32.ChecksumIEEE(d[keysOffset:]))
	binary.BigEndian.PutUint32(d[188:], crc32.ChecksumIEEE(d[:headerCRCSpan]))
	return d
}

// programVersion prints the minimum program version field the way the
// programs write version numbers, from its hex digits: 0x071a → "7.1a",
// 0x0600 → "6.0", 0x010b → "1.0b".
func programVersion(v uint16) string {
	if v == 0 {
		return ""
	}
	s := fmt.Sprintf("%x.%02x", v>>8, v&0xFF)
	if strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
	}
	return s
}
