package bitlk

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
	"unicode/utf16"

	"github.com/cryptvol/cryptvol/volume"
)

// The layout of a BitLocker volume (Windows 7 and later), after libbde's
// format documentation and cryptsetup's lib/bitlk:
//
//	sector 0        a boot sector with signature "-FVE-FS-" (BitLocker To Go
//	                on FAT: "MSWIN4.1") holding the BitLocker GUID and the
//	                offsets of three copies of the FVE metadata block
//	FVE block ×3    64 KiB areas: a block header, a metadata header, the
//	                metadata entries (keys, protectors, description), and a
//	                validation block with the CRC-32 of the block and an
//	                AES-CCM-protected SHA-256 of it
//	header backup   the volume's real first sectors, encrypted, somewhere
//	                in the middle ("volume header" entry)
//
// All integers are little-endian.
const (
	signature     = "-FVE-FS-"
	signatureToGo = "MSWIN4.1"
	// The BitLocker GUID and FVE offsets sit at these offsets of the boot
	// sector (after an NTFS-like or a FAT32 BPB).
	superblockOffset     = 160
	superblockOffsetToGo = 424
	// fveAreaSize is the space each FVE metadata copy occupies, which the
	// volume shows as zeros.
	fveAreaSize = 64 << 10
	// blockHeaderLen and metadataHeaderLen are the two fixed headers at
	// the start of an FVE block; the entries follow.
	blockHeaderLen    = 64
	metadataHeaderLen = 48
	entryHeaderLen    = 8
	// stateNormal is the conversion state of a volume encrypted in full.
	stateNormal = 4
)

var (
	bootCodeV2 = []byte{0xeb, 0x58, 0x90}
	bootCodeV1 = []byte{0xeb, 0x52, 0x90} // Windows Vista
)

// Entry types (the "type" of a top-level FVE metadata entry).
const (
	entryProperty     = 0x0000
	entryVMK          = 0x0002
	entryFVEK         = 0x0003
	entryValidation   = 0x0004
	entryStartupKey   = 0x0006
	entryDescription  = 0x0007
	entryVolumeHeader = 0x000f
)

// Value types (what an entry's data is).
const (
	valueErased      = 0x0000
	valueKey         = 0x0001
	valueString      = 0x0002
	valueStretchKey  = 0x0003
	valueUseKey      = 0x0004
	valueAESCCM      = 0x0005
	valueTPMKey      = 0x0006
	valueVMK         = 0x0008
	valueExternalKey = 0x0009
	valueOffsetSize  = 0x000f
)

// Protection is how a VMK is protected.
type Protection uint16

// The protections BitLocker writes; cryptvol opens the first four.
const (
	ClearKey         Protection = 0x0000
	StartupKey       Protection = 0x0200
	RecoveryPassword Protection = 0x0800
	Password         Protection = 0x2000
	TPM              Protection = 0x0100
	TPMAndStartupKey Protection = 0x0300
	TPMAndPINAndKey  Protection = 0x0400
	TPMAndPIN        Protection = 0x0500
	SmartCard        Protection = 0x1000
)

func (p Protection) String() string {
	switch p {
	case ClearKey:
		return "clear key"
	case StartupKey:
		return "startup key"
	case RecoveryPassword:
		return "recovery password"
	case Password:
		return "password"
	case TPM:
		return "TPM"
	case TPMAndStartupKey:
		return "TPM and startup key"
	case TPMAndPINAndKey:
		return "TPM, PIN and startup key"
	case TPMAndPIN:
		return "TPM and PIN"
	case SmartCard:
		return "smart card"
	}
	return fmt.Sprintf("unknown protection 0x%04x", uint16(p))
}

// Method is the encryption method of the data.
type Method uint16

const (
	AESCBC128Elephant Method = 0x8000
	AESCBC256Elephant Method = 0x8001
	AESCBC128         Method = 0x8002
	AESCBC256         Method = 0x8003
	AESXTS128         Method = 0x8004
	AESXTS256         Method = 0x8005
)

// Mode is cryptsetup's name of the method's mode.
func (m Method) Mode() string {
	switch m {
	case AESCBC128Elephant, AESCBC256Elephant:
		return "cbc-elephant"
	case AESCBC128, AESCBC256:
		return "cbc-eboiv"
	case AESXTS128, AESXTS256:
		return "xts-plain64"
	}
	return ""
}

// keyBits is the size of the volume key cryptsetup hands dm-crypt: both
// XTS halves, or the CBC key and the Elephant sector key.
func (m Method) keyBits() int {
	switch m {
	case AESCBC128:
		return 128
	case AESCBC256, AESXTS128, AESCBC128Elephant:
		return 256
	case AESXTS256, AESCBC256Elephant:
		return 512
	}
	return 0
}

func (m Method) String() string {
	if m.Mode() == "" {
		return fmt.Sprintf("unknown method 0x%04x", uint16(m))
	}
	return "aes-" + m.Mode()
}

// ccmDatum is an AES-CCM-protected key or digest.
type ccmDatum struct {
	nonce [12]byte
	tag   [16]byte
	ct    []byte
}

func parseCCM(data []byte) (*ccmDatum, error) {
	if len(data) < 12+16 {
		return nil, fmt.Errorf("an AES-CCM datum of %d bytes is too short", len(data))
	}
	d := &ccmDatum{ct: append([]byte(nil), data[28:]...)}
	copy(d.nonce[:], data)
	copy(d.tag[:], data[12:])
	return d, nil
}

// VMK is one volume master key protector.
type VMK struct {
	GUID       GUID
	Protection Protection
	// Name is the optional string Windows stores with some protectors
	// ("DiskPassword", "ExternalKey").
	Name     string
	Modified time.Time
	// Salt of the SHA-256 stretch (password, recovery password).
	Salt    [16]byte
	hasSalt bool
	// enc is the VMK encrypted with the protector's key; clearKey is the
	// key a clear-key protector stores in the open.
	enc      *ccmDatum
	clearKey []byte
}

// Metadata is what a BitLocker volume says without any key.
type Metadata struct {
	ToGo       bool
	SectorSize int
	// EOW is set for an encrypt-on-write ("used space only") volume.
	EOW         bool
	UnknownType bool
	// CurrentState and NextState are the conversion states (4 and 4 for a
	// volume encrypted in full).
	CurrentState, NextState uint16
	// VolumeSize is the size the metadata records (the encrypted part,
	// while a conversion is under way).
	VolumeSize  uint64
	GUID        GUID
	Method      Method
	Created     time.Time
	Description string
	// MetadataOffsets are the three FVE block copies; Copy is the one used
	// (the first whose CRC-32 checks out).
	MetadataOffsets [3]int64
	Copy            int
	// HeaderOffset and HeaderSize locate the encrypted copy of the
	// volume's first sectors.
	HeaderOffset, HeaderSize int64
	VMKs                     []VMK
	// NextNonce is the counter Windows uses for the next AES-CCM nonce.
	NextNonce uint32

	fvek       *ccmDatum
	validation *ccmDatum
	// blockDigest is the SHA-256 of the FVE block, which the validation
	// datum must hold once decrypted with the VMK.
	blockDigest [32]byte
}

// errNotBitLocker wraps the wrong-password sentinel: a file without the
// signature is simply not this format.
var errNotBitLocker = fmt.Errorf("%w: no BitLocker signature", volume.ErrWrongPassword)

// IsBitLocker reports whether the boot sector in head is a BitLocker one.
func IsBitLocker(head []byte) bool {
	if len(head) < 512 {
		return false
	}
	switch string(head[3:11]) {
	case signature:
		return true
	case signatureToGo:
		// "MSWIN4.1" is a common FAT OEM name: only the BitLocker GUID
		// behind it makes it BitLocker To Go.
		g := guidAt(head[superblockOffsetToGo:])
		return g == guidNormal || g == guidEOW
	}
	return false
}

func damaged(format string, a ...any) error {
	return fmt.Errorf("%w: BitLocker: %s", volume.ErrDamaged, fmt.Sprintf(format, a...))
}

func unsupported(format string, a ...any) error {
	return fmt.Errorf("%w: BitLocker: %s", volume.ErrUnsupported, fmt.Sprintf(format, a...))
}

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

// ReadMetadata reads and checks the BitLocker metadata of dev.
func ReadMetadata(dev volume.Device) (*Metadata, error) {
	boot, err := readFull(dev, 0, 512)
	if err != nil {
		if errors.Is(err, volume.ErrDamaged) {
			return nil, errNotBitLocker
		}
		return nil, err
	}
	m := &Metadata{}
	sbOff := superblockOffset
	switch string(boot[3:11]) {
	case signature:
	case signatureToGo:
		if !IsBitLocker(boot) {
			return nil, errNotBitLocker
		}
		m.ToGo, sbOff = true, superblockOffsetToGo
	default:
		return nil, errNotBitLocker
	}
	switch {
	case bytes.Equal(boot[:3], bootCodeV1):
		return nil, unsupported("the BitLocker format of Windows Vista is not supported")
	case !bytes.Equal(boot[:3], bootCodeV2):
		return nil, damaged("unknown boot code % x", boot[:3])
	}
	m.SectorSize = int(binary.LittleEndian.Uint16(boot[11:]))
	if m.SectorSize == 0 {
		m.SectorSize = 512
	}
	if m.SectorSize != 512 && m.SectorSize != 4096 {
		return nil, unsupported("sector size %d (only 512 and 4096 are known)", m.SectorSize)
	}
	switch g := guidAt(boot[sbOff:]); g {
	case guidNormal:
	case guidEOW:
		m.EOW = true
	default:
		m.UnknownType = true
	}
	var offs [3]int64
	for i := range offs {
		offs[i] = int64(binary.LittleEndian.Uint64(boot[sbOff+16+8*i:]))
	}
	block, idx, err := readValidBlock(dev, offs)
	if err != nil {
		return nil, err
	}
	m.Copy = idx
	if err := m.parseBlock(block, offs[idx], idx); err != nil {
		return nil, err
	}
	return m, nil
}

// readValidBlock returns the first FVE block copy whose header is sound
// and whose CRC-32 matches, with its index.
func readValidBlock(dev volume.Device, offs [3]int64) ([]byte, int, error) {
	var firstErr error
	for i, off := range offs {
		b, err := readBlock(dev, off)
		if err == nil {
			return b, i, nil
		}
		if !errors.Is(err, volume.ErrDamaged) {
			return nil, 0, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, 0, fmt.Errorf("%w (and so are the other two copies)", firstErr)
}

// readBlock reads one FVE block (its header, entries and validation) at
// off and checks it.
func readBlock(dev volume.Device, off int64) ([]byte, error) {
	if off <= 0 || off > dev.Size()-fveAreaSize {
		return nil, damaged("FVE metadata offset %d is outside the volume", off)
	}
	area, err := readFull(dev, off, fveAreaSize)
	if err != nil {
		return nil, err
	}
	if string(area[:8]) != signature {
		return nil, damaged("no FVE metadata signature at %d", off)
	}
	if v := binary.LittleEndian.Uint16(area[10:]); v != 2 {
		return nil, unsupported("FVE metadata version %d at %d", v, off)
	}
	size := int(binary.LittleEndian.Uint16(area[8:])) << 4
	mdSize := int(binary.LittleEndian.Uint32(area[blockHeaderLen:]))
	if size < blockHeaderLen+metadataHeaderLen || size > fveAreaSize-8 ||
		mdSize < metadataHeaderLen || blockHeaderLen+mdSize > size {
		return nil, damaged("FVE metadata at %d has inconsistent sizes (block %d, metadata %d)", off, size, mdSize)
	}
	val := area[size:]
	vsize := int(binary.LittleEndian.Uint16(val))
	if vsize < 8 || binary.LittleEndian.Uint16(val[2:]) > 2 {
		return nil, damaged("FVE metadata at %d has no validation block", off)
	}
	if got, want := crc32.ChecksumIEEE(area[:size]), binary.LittleEndian.Uint32(val[4:]); got != want {
		return nil, damaged("FVE metadata at %d fails its CRC-32 (0x%08x, recorded 0x%08x)", off, got, want)
	}
	// The block and the validation block that follows it.
	return area[:size+min(vsize, fveAreaSize-size)], nil
}

// entry is one FVE metadata entry ("datum").
type entry struct {
	typ, value uint16
	data       []byte
}

// parseEntries splits b into entries; a zero size ends the list.
func parseEntries(b []byte) ([]entry, error) {
	var out []entry
	for len(b) >= entryHeaderLen {
		size := int(binary.LittleEndian.Uint16(b))
		if size == 0 {
			break
		}
		if size < entryHeaderLen || size > len(b) {
			return nil, damaged("a metadata entry of %d bytes overruns its %d-byte list", size, len(b))
		}
		out = append(out, entry{
			typ:   binary.LittleEndian.Uint16(b[2:]),
			value: binary.LittleEndian.Uint16(b[4:]),
			data:  b[entryHeaderLen:size],
		})
		b = b[size:]
	}
	return out, nil
}

func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	for len(u) > 0 && u[len(u)-1] == 0 {
		u = u[:len(u)-1]
	}
	return string(utf16.Decode(u))
}

// filetime converts a Windows FILETIME (100 ns since 1601).
func filetime(v uint64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	const epochDiff = 116444736000000000 // 1601 to 1970 in 100 ns
	return time.Unix(0, 0).Add(time.Duration(int64(v-epochDiff)) * 100).UTC()
}

func (m *Metadata) parseBlock(b []byte, off int64, idx int) error {
	le := binary.LittleEndian
	size := int(le.Uint16(b[8:])) << 4
	m.CurrentState = le.Uint16(b[12:])
	m.NextState = le.Uint16(b[14:])
	m.VolumeSize = le.Uint64(b[16:])
	headerSectors := int64(le.Uint32(b[28:]))
	for i := range m.MetadataOffsets {
		m.MetadataOffsets[i] = int64(le.Uint64(b[32+8*i:]))
	}
	if m.MetadataOffsets[idx] != off {
		return damaged("the FVE metadata copy read at %d says it belongs at %d", off, m.MetadataOffsets[idx])
	}
	m.HeaderOffset = int64(le.Uint64(b[56:]))
	m.HeaderSize = headerSectors * int64(m.SectorSize)
	md := b[blockHeaderLen:]
	mdSize := int(le.Uint32(md))
	m.GUID = guidAt(md[16:])
	m.NextNonce = le.Uint32(md[32:])
	m.Method = Method(le.Uint16(md[36:]))
	m.Created = filetime(le.Uint64(md[40:]))
	m.blockDigest = sha256.Sum256(b[:size])
	entries, err := parseEntries(b[blockHeaderLen+metadataHeaderLen : blockHeaderLen+mdSize])
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch e.typ {
		case entryVMK:
			v, err := parseVMK(e.data)
			if err != nil {
				return err
			}
			m.VMKs = append(m.VMKs, *v)
		case entryFVEK:
			if m.fvek == nil && e.value == valueAESCCM {
				if m.fvek, err = parseCCM(e.data); err != nil {
					return damaged("FVEK: %v", err)
				}
			}
		case entryVolumeHeader:
			if len(e.data) < 16 {
				return damaged("a volume header entry of %d bytes", len(e.data))
			}
			m.HeaderOffset = int64(le.Uint64(e.data))
			m.HeaderSize = int64(le.Uint64(e.data[8:]))
		case entryDescription:
			if m.Description == "" && e.value == valueString {
				m.Description = utf16String(e.data)
			}
		}
	}
	if m.fvek == nil {
		return damaged("no encrypted FVEK in the metadata")
	}
	return m.parseValidation(b[size:])
}

// parseValidation reads the AES-CCM datum of the validation block, which
// holds the SHA-256 of the FVE block encrypted with the VMK.
func (m *Metadata) parseValidation(v []byte) error {
	if len(v) < 8+entryHeaderLen {
		return damaged("the validation block is %d bytes", len(v))
	}
	entries, err := parseEntries(v[8:])
	if err != nil || len(entries) == 0 || entries[0].value != valueAESCCM {
		return damaged("the validation block holds no AES-CCM datum")
	}
	if m.validation, err = parseCCM(entries[0].data); err != nil {
		return damaged("validation: %v", err)
	}
	return nil
}

func parseVMK(b []byte) (*VMK, error) {
	if len(b) < 28 {
		return nil, damaged("a VMK entry of %d bytes", len(b))
	}
	le := binary.LittleEndian
	v := &VMK{
		GUID:       guidAt(b),
		Modified:   filetime(le.Uint64(b[16:])),
		Protection: Protection(le.Uint16(b[26:])),
	}
	props, err := parseEntries(b[28:])
	if err != nil {
		return nil, err
	}
	for _, p := range props {
		switch p.value {
		case valueStretchKey:
			if len(p.data) < 4+16 {
				return nil, damaged("VMK %s: a stretch key of %d bytes", v.GUID, len(p.data))
			}
			copy(v.Salt[:], p.data[4:])
			v.hasSalt = true
		case valueAESCCM:
			if v.enc == nil {
				if v.enc, err = parseCCM(p.data); err != nil {
					return nil, damaged("VMK %s: %v", v.GUID, err)
				}
			}
		case valueKey:
			if len(p.data) < 4 {
				return nil, damaged("VMK %s: a key of %d bytes", v.GUID, len(p.data))
			}
			v.clearKey = append([]byte(nil), p.data[4:]...)
		case valueString:
			if v.Name == "" {
				v.Name = utf16String(p.data)
			}
		}
	}
	return v, nil
}
