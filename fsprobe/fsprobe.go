// Package fsprobe recognises the filesystem at the start of a decrypted data
// area (FAT12/16/32, exFAT, NTFS, ext2/3/4, HFS+) from its first sectors,
// and reports its label and serial or UUID the way blkid prints them. It
// also names a BitLocker volume found there (still encrypted), which would
// otherwise pass for the FAT or NTFS it imitates.
//
// A correct answer here is how the tests know a volume was decrypted with
// the right key: the corpus volumes hold FAT filesystems with known serials.
package fsprobe

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Result describes the filesystem found.
type Result struct {
	Type    string // "vfat", "exfat", "ntfs", "ext2", "ext3", "ext4", "hfsplus", "BitLocker"
	Version string // "FAT12", "FAT16", "FAT32" for vfat
	Label   string
	Serial  string // FAT/exFAT "DEAD-BABE", NTFS 16 hex digits
	UUID    string // ext2/3/4
	// Size is how many bytes the filesystem says it covers, from its
	// start (0 when the boot sector or superblock does not tell).
	Size int64
}

// ErrUnknown means no known filesystem signature was found.
var ErrUnknown = errors.New("no known filesystem")

// Probe reads the first 2 KiB at r and identifies the filesystem.
func Probe(r io.ReaderAt) (*Result, error) {
	buf := make([]byte, 2048)
	n, err := r.ReadAt(buf, 0)
	if n < 512 {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	buf = buf[:n]
	// BitLocker first: its boot sector carries an NTFS-like or (To Go) a
	// FAT32 BPB.
	if res := probeBitLocker(buf); res != nil {
		return res, nil
	}
	if res := probeExt(buf); res != nil {
		return res, nil
	}
	if res := probeNTFS(buf); res != nil {
		return res, nil
	}
	if res := probeExFAT(buf); res != nil {
		return res, nil
	}
	if res := probeFAT(buf); res != nil {
		return res, nil
	}
	if res := probeHFSPlus(buf); res != nil {
		return res, nil
	}
	return nil, ErrUnknown
}

func probeFAT(b []byte) *Result {
	if b[510] != 0x55 || b[511] != 0xAA {
		return nil
	}
	bps := int(binary.LittleEndian.Uint16(b[11:]))
	spc := int(b[13])
	reserved := int(binary.LittleEndian.Uint16(b[14:]))
	nfats := int(b[16])
	rootEnts := int(binary.LittleEndian.Uint16(b[17:]))
	total := int64(binary.LittleEndian.Uint16(b[19:]))
	fatSz := int64(binary.LittleEndian.Uint16(b[22:]))
	if total == 0 {
		total = int64(binary.LittleEndian.Uint32(b[32:]))
	}
	if fatSz == 0 {
		fatSz = int64(binary.LittleEndian.Uint32(b[36:]))
	}
	if !(bps == 512 || bps == 1024 || bps == 2048 || bps == 4096) || spc == 0 || spc&(spc-1) != 0 ||
		reserved == 0 || nfats == 0 || nfats > 4 || fatSz == 0 || total == 0 {
		return nil
	}
	// Cluster count decides the FAT type (Microsoft FAT specification).
	rootSecs := int64((rootEnts*32 + bps - 1) / bps)
	dataSecs := total - (int64(reserved) + int64(nfats)*fatSz + rootSecs)
	if dataSecs <= 0 {
		return nil
	}
	clusters := dataSecs / int64(spc)
	res := &Result{Type: "vfat", Size: total * int64(bps)}
	var serialOff, labelOff int
	switch {
	case clusters < 4085:
		res.Version, serialOff, labelOff = "FAT12", 39, 43
	case clusters < 65525:
		res.Version, serialOff, labelOff = "FAT16", 39, 43
	default:
		res.Version, serialOff, labelOff = "FAT32", 67, 71
	}
	sigOff := serialOff - 1 // extended boot signature 0x29 (or 0x28: serial only)
	if b[sigOff] == 0x29 || b[sigOff] == 0x28 {
		s := binary.LittleEndian.Uint32(b[serialOff:])
		res.Serial = fmt.Sprintf("%04X-%04X", s>>16, s&0xFFFF)
	}
	if b[sigOff] == 0x29 {
		l := strings.TrimRight(string(b[labelOff:labelOff+11]), " \x00")
		if l != "NO NAME" {
			res.Label = l
		}
	}
	return res
}

func probeExFAT(b []byte) *Result {
	if string(b[3:11]) != "EXFAT   " {
		return nil
	}
	s := binary.LittleEndian.Uint32(b[100:])
	res := &Result{Type: "exfat", Serial: fmt.Sprintf("%04X-%04X", s>>16, s&0xFFFF)}
	// VolumeLength in sectors of 2^BytesPerSectorShift bytes.
	if shift := b[108]; shift >= 9 && shift <= 12 {
		res.Size = int64(binary.LittleEndian.Uint64(b[72:])) << shift
	}
	return res
}

func probeNTFS(b []byte) *Result {
	if string(b[3:11]) != "NTFS    " {
		return nil
	}
	res := &Result{Type: "ntfs", Serial: fmt.Sprintf("%016X", binary.LittleEndian.Uint64(b[72:]))}
	// Total sectors (the backup boot sector lies in the sector after).
	if bps := int64(binary.LittleEndian.Uint16(b[11:])); bps >= 512 && bps <= 4096 {
		res.Size = (int64(binary.LittleEndian.Uint64(b[40:])) + 1) * bps
	}
	return res
}

func probeExt(b []byte) *Result {
	if len(b) < 1024+256 {
		return nil
	}
	sb := b[1024:]
	if binary.LittleEndian.Uint16(sb[56:]) != 0xEF53 {
		return nil
	}
	compat := binary.LittleEndian.Uint32(sb[92:])
	incompat := binary.LittleEndian.Uint32(sb[96:])
	roCompat := binary.LittleEndian.Uint32(sb[100:])
	typ := "ext2"
	if compat&0x4 != 0 { // has_journal
		typ = "ext3"
	}
	// extents, 64bit, flex_bg, huge_file, dir_nlink, extra_isize, ...
	if incompat&(0x40|0x80|0x200) != 0 || roCompat&(0x8|0x20|0x40) != 0 {
		typ = "ext4"
	}
	u := sb[104:120]
	blocks := int64(binary.LittleEndian.Uint32(sb[4:]))
	if incompat&0x80 != 0 { // 64bit: the high half of the block count
		blocks |= int64(binary.LittleEndian.Uint32(sb[0x150:])) << 32
	}
	var size int64
	if logSize := binary.LittleEndian.Uint32(sb[24:]); logSize <= 6 {
		size = blocks << (10 + logSize)
	}
	return &Result{
		Size:  size,
		Type:  typ,
		Label: strings.TrimRight(string(sb[120:136]), "\x00"),
		UUID:  fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]),
	}
}

// probeBitLocker recognises a BitLocker volume by its boot sector, as
// blkid does: "-FVE-FS-" after the jump (Windows 7 and later: version 2,
// Vista: 1), or BitLocker To Go's "MSWIN4.1" with the BitLocker GUID
// 4967d63b-2e29-4ad8-8399-f6a339e3d001 (or its encrypt-on-write variant)
// at offset 424.
func probeBitLocker(b []byte) *Result {
	if len(b) < 512 {
		return nil
	}
	version := ""
	switch {
	case string(b[0:3]) == "\xeb\x52\x90":
		version = "1"
	case string(b[0:3]) == "\xeb\x58\x90":
		version = "2"
	default:
		return nil
	}
	switch string(b[3:11]) {
	case "-FVE-FS-":
		return &Result{Type: "BitLocker", Version: version}
	case "MSWIN4.1":
		switch string(b[424:440]) {
		case "\x3b\xd6\x67\x49\x29\x2e\xd8\x4a\x83\x99\xf6\xa3\x39\xe3\xd0\x01",
			"\x3b\x4d\xa8\x92\x80\xdd\x0e\x4d\x9e\x4e\xb1\xe3\x28\x4e\xae\xd8":
			return &Result{Type: "BitLocker", Version: version}
		}
	}
	return nil
}

// hfsUUIDNamespace is the name space of the UUID blkid derives from an
// HFS+ volume's 64-bit identifier (an MD5-based, version 3 UUID).
var hfsUUIDNamespace = []byte{0xb3, 0xe2, 0x0f, 0x39, 0xf2, 0x92, 0x11, 0xd6, 0x97, 0xa4, 0x00, 0x30, 0x65, 0x43, 0xec, 0xac}

// probeHFSPlus recognises the HFS+ (or HFSX) volume header at 1024, as
// in FileVault 2 logical volumes, and derives the UUID blkid shows from
// the volume identifier in its Finder information (bytes 104-111).
func probeHFSPlus(b []byte) *Result {
	if len(b) < 1024+512 {
		return nil
	}
	h := b[1024:]
	sig := string(h[0:2])
	if sig != "H+" && sig != "HX" {
		return nil
	}
	if v := binary.BigEndian.Uint16(h[2:]); (sig == "H+" && v != 4) || (sig == "HX" && v != 5) {
		return nil
	}
	if bs := binary.BigEndian.Uint32(h[40:]); bs < 512 || bs&(bs-1) != 0 {
		return nil
	}
	res := &Result{Type: "hfsplus"}
	id := h[104:112]
	if string(id) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		m := md5.New()
		m.Write(hfsUUIDNamespace)
		m.Write(id)
		u := m.Sum(nil)
		u[6] = 0x30 | u[6]&0x0f
		u[8] = 0x80 | u[8]&0x3f
		res.UUID = fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
	}
	return res
}
