package fvault2

import (
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/volume"
)

// The CoreStorage layout (libfvde's documentation, cryptsetup's
// lib/fvault2): a 512-byte physical volume header at the start; it points
// at the disk label metadata block, whose volume groups descriptor points
// at the encrypted metadata: 8 KiB blocks, each AES-XTS-128 encrypted with
// the key in the header and the physical volume UUID as the tweak key
// (tweak = block index). Three of those blocks matter: 0x0019 holds the
// XML with the passphrase-wrapped key-encryption key and the wrapped
// volume key, 0x001A the logical volume's size and family UUID, 0x0305
// where the logical volume starts. Every block carries a CRC-32C seeded
// with 0xFFFFFFFF. Integers are little-endian except the "CS" magic.
const (
	headerSize  = 512
	mdBlockSize = 8192
	// maxMetadataOffset bounds where metadata may be (as cryptsetup
	// does), so a hostile header cannot send reads anywhere.
	maxMetadataOffset = 1 << 30
	// maxEncryptedBlocks bounds the encrypted metadata read (cryptsetup
	// stops at the first all-zero block; a hostile count is cut here).
	maxEncryptedBlocks = 1 << 16
	keySize            = 16
	magicOffset        = 88
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkCRC verifies a CoreStorage block: value and seed (0xFFFFFFFF) in
// the first 8 bytes, the CRC-32C of the rest without the final inversion.
func checkCRC(b []byte) bool {
	value := binary.LittleEndian.Uint32(b)
	seed := binary.LittleEndian.Uint32(b[4:])
	if seed != 0xffffffff {
		return false
	}
	return ^crc32.Update(^seed, castagnoli, b[8:]) == value
}

// IsCoreStorage reports whether head starts with a CoreStorage physical
// volume header (magic, version and checksum).
func IsCoreStorage(head []byte) bool {
	return len(head) >= headerSize && string(head[magicOffset:magicOffset+2]) == "CS" &&
		binary.LittleEndian.Uint16(head[8:]) == 1 && checkCRC(head[:headerSize])
}

// Metadata is what a FileVault 2 CoreStorage volume says without the
// password.
type Metadata struct {
	PhysicalVolumeUUID [16]byte
	FamilyUUID         [16]byte
	BlockSize          int64
	// LVOffset and LVSize locate the encrypted logical volume on the
	// physical volume, in bytes.
	LVOffset, LVSize int64
	// Iterations and Salt are the PBKDF2-SHA256 parameters of the first
	// passphrase.
	Iterations int
	Salt       [16]byte

	passphrases []passphraseKEK
	wrappedVKs  [][24]byte
}

// passphraseKEK is one PassphraseWrappedKEKStruct: the key-encryption key
// wrapped with a key derived from a user's passphrase.
type passphraseKEK struct {
	salt       [16]byte
	wrapped    [24]byte
	iterations int
}

func damaged(format string, a ...any) error {
	return fmt.Errorf("%w: FileVault 2: %s", volume.ErrDamaged, fmt.Sprintf(format, a...))
}

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: FileVault 2: %s", volume.ErrUnsupported, fmt.Sprintf(format, a...))
}

var errNotCoreStorage = fmt.Errorf("%w: no CoreStorage volume header", volume.ErrWrongPassword)

func readFull(r io.ReaderAt, off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	k, err := r.ReadAt(b, off)
	if k == n {
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = damaged("the volume ends at %d, inside the metadata at %d", off+int64(k), off)
	}
	return nil, err
}

// ReadMetadata reads the CoreStorage header and decrypts the metadata.
func ReadMetadata(dev volume.Device) (*Metadata, error) {
	h, err := readFull(dev, 0, headerSize)
	if err != nil {
		return nil, errNotCoreStorage
	}
	if string(h[magicOffset:magicOffset+2]) != "CS" {
		return nil, errNotCoreStorage
	}
	if !checkCRC(h) {
		return nil, damaged("the physical volume header fails its CRC-32C")
	}
	le := binary.LittleEndian
	if v := le.Uint16(h[8:]); v != 1 {
		return nil, unsupported("CoreStorage version %d", v)
	}
	if n := le.Uint32(h[168:]); n != keySize {
		return nil, unsupported("a %d-byte metadata key (only AES-128 is known)", n)
	}
	m := &Metadata{BlockSize: int64(le.Uint32(h[96:]))}
	if m.BlockSize < 512 || m.BlockSize > 1<<20 || m.BlockSize&(m.BlockSize-1) != 0 {
		return nil, damaged("block size %d", m.BlockSize)
	}
	copy(m.PhysicalVolumeUUID[:], h[304:])
	labelOff, err := m.blockOffset(le.Uint64(h[104:]))
	if err != nil {
		return nil, err
	}
	encOff, encBlocks, err := m.readDiskLabel(dev, labelOff)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	copy(key, h[176:192])
	copy(key[16:], m.PhysicalVolumeUUID[:])
	err = m.readEncryptedMetadata(dev, encOff, encBlocks, key)
	clear(key)
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (m *Metadata) blockOffset(blk uint64) (int64, error) {
	if blk > maxMetadataOffset/uint64(m.BlockSize) {
		return 0, damaged("metadata block %d lies beyond the first GiB", blk)
	}
	return int64(blk) * m.BlockSize, nil
}

// readDiskLabel reads the disk label block (type 0x0011) and its volume
// groups descriptor: where the encrypted metadata is and how many blocks.
func (m *Metadata) readDiskLabel(dev volume.Device, off int64) (int64, uint64, error) {
	b, err := readFull(dev, off, mdBlockSize)
	if err != nil {
		return 0, 0, err
	}
	if !checkCRC(b) {
		return 0, 0, damaged("the disk label block at %d fails its CRC-32C", off)
	}
	le := binary.LittleEndian
	vgOff := off + int64(le.Uint32(b[220:]))
	if vgOff > maxMetadataOffset {
		return 0, 0, damaged("the volume groups descriptor lies beyond the first GiB")
	}
	vg, err := readFull(dev, vgOff, 40)
	if err != nil {
		return 0, 0, err
	}
	encOff, err := m.blockOffset(le.Uint64(vg[32:]))
	if err != nil {
		return 0, 0, err
	}
	return encOff, le.Uint64(vg[8:]), nil
}

// readEncryptedMetadata decrypts the metadata blocks until the first
// all-zero one and collects what the three block types hold.
func (m *Metadata) readEncryptedMetadata(dev volume.Device, off int64, blocks uint64, key []byte) error {
	c, err := xts.NewCipher(aes.NewCipher, key)
	if err != nil {
		return err
	}
	const (
		haveKeys = 1 << iota
		haveLV
		haveOffset
	)
	have := 0
	enc := make([]byte, mdBlockSize)
	b := make([]byte, mdBlockSize)
	zero := make([]byte, mdBlockSize)
	le := binary.LittleEndian
	for i := uint64(0); i < min(blocks, maxEncryptedBlocks); i++ {
		at := off + int64(i)*mdBlockSize
		if at > maxMetadataOffset {
			return damaged("the encrypted metadata runs beyond the first GiB")
		}
		if _, err := dev.ReadAt(enc, at); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if bytes.Equal(enc, zero) {
			break
		}
		c.Decrypt(b, enc, i)
		if !checkCRC(b) {
			return damaged("encrypted metadata block %d fails its CRC-32C (the metadata key is wrong or the block is damaged)", i)
		}
		switch le.Uint16(b[10:]) {
		case 0x0019:
			if err := m.parseKeys(b); err != nil {
				return err
			}
			have |= haveKeys
		case 0x001a:
			if err := m.parseLV(b); err != nil {
				return err
			}
			have |= haveLV
		case 0x0305:
			// The logical volume may be anywhere on the disk (a 32-bit
			// block number times a block size of at most 1 MiB fits).
			m.LVOffset = int64(le.Uint32(b[104:])) * m.BlockSize
			have |= haveOffset
		}
	}
	clear(b)
	if have != haveKeys|haveLV|haveOffset {
		return unsupported("the encrypted metadata lacks the passphrase keys, the logical volume or its offset (not a FileVault 2 volume, or an unknown variant)")
	}
	return nil
}

// xmlOf returns the XML text of a metadata block at offset off, size n.
func xmlOf(b []byte, off, n uint32) (string, error) {
	if off >= mdBlockSize || n > mdBlockSize-off {
		return "", damaged("an XML plist of %d bytes at %d overruns its block", n, off)
	}
	x := b[off : off+n]
	if i := bytes.IndexByte(x, 0); i >= 0 {
		x = x[:i]
	}
	return string(x), nil
}

// parseKeys reads block 0x0019: the passphrase-wrapped KEKs and the
// KEK-wrapped volume keys.
func (m *Metadata) parseKeys(b []byte) error {
	le := binary.LittleEndian
	x, err := xmlOf(b, le.Uint32(b[112:]), le.Uint32(b[116:]))
	if err != nil {
		return err
	}
	for _, v := range plistValues(x, "PassphraseWrappedKEKStruct", "data") {
		d, err := plistData(v)
		if err != nil || len(d) != 284 {
			return damaged("a PassphraseWrappedKEKStruct of %d bytes (want 284)", len(d))
		}
		var p passphraseKEK
		copy(p.salt[:], d[8:24])
		copy(p.wrapped[:], d[32:56])
		p.iterations = int(le.Uint32(d[168:]))
		if le.Uint32(d[4:]) != 16 || le.Uint32(d[28:]) != 24 || p.iterations <= 0 {
			return unsupported("a passphrase key with a %d-byte salt, a %d-byte wrapped key and %d iterations",
				le.Uint32(d[4:]), le.Uint32(d[28:]), p.iterations)
		}
		m.passphrases = append(m.passphrases, p)
	}
	for _, v := range plistValues(x, "KEKWrappedVolumeKeyStruct", "data") {
		if strings.TrimSpace(v) == "" {
			continue // a volume key slot with no key ("BlockAlgorithm None")
		}
		d, err := plistData(v)
		if err != nil || len(d) != 256 {
			return damaged("a KEKWrappedVolumeKeyStruct of %d bytes (want 256)", len(d))
		}
		if le.Uint32(d[4:]) != 24 {
			return unsupported("a wrapped volume key of %d bytes", le.Uint32(d[4:]))
		}
		var w [24]byte
		copy(w[:], d[8:32])
		m.wrappedVKs = append(m.wrappedVKs, w)
	}
	if len(m.passphrases) == 0 || len(m.wrappedVKs) == 0 {
		return unsupported("no passphrase-wrapped key (the volume may open only with a recovery key or an institutional key)")
	}
	m.Iterations, m.Salt = m.passphrases[0].iterations, m.passphrases[0].salt
	return nil
}

// parseLV reads block 0x001A: the logical volume's size and family UUID.
func (m *Metadata) parseLV(b []byte) error {
	le := binary.LittleEndian
	x, err := xmlOf(b, le.Uint32(b[128:]), le.Uint32(b[132:]))
	if err != nil {
		return err
	}
	sizes := plistValues(x, "com.apple.corestorage.lv.size", "integer")
	uuids := plistValues(x, "com.apple.corestorage.lv.familyUUID", "string")
	if len(sizes) == 0 || len(uuids) == 0 {
		return damaged("the logical volume's size or family UUID is missing")
	}
	size, err := plistInteger(sizes[0])
	if err != nil || size == 0 || size%512 != 0 || size > 1<<62 {
		return damaged("logical volume size %q", sizes[0])
	}
	m.LVSize = int64(size)
	u, err := parseUUID(uuids[0])
	if err != nil {
		return damaged("family UUID %q", uuids[0])
	}
	m.FamilyUUID = u
	return nil
}

func parseUUID(s string) ([16]byte, error) {
	var u [16]byte
	h := bytes.ReplaceAll([]byte(s), []byte("-"), nil)
	if len(h) != 32 {
		return u, errors.New("not a UUID")
	}
	for i := range u {
		hi, lo := unhex(h[2*i]), unhex(h[2*i+1])
		if hi < 0 || lo < 0 {
			return u, errors.New("not a UUID")
		}
		u[i] = byte(hi<<4 | lo)
	}
	return u, nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// uuidString formats a UUID as 8-4-4-4-12 lowercase hex.
func uuidString(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
