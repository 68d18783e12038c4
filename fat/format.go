package fat

import (
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// FormatOptions chooses what Format creates. The zero value gives what
// `mkfs.fat DEVICE` gives: type and cluster size chosen from the size, no
// label, a random serial number.
type FormatOptions struct {
	// Label is the volume label: up to 11 ASCII characters, none of
	// *?.,;:/\|+=<>[]" and not starting with a space. Empty means none
	// ("NO NAME" in the boot sector, as mkfs.fat writes).
	Label string
	// Serial is the volume serial number; 0 picks a random one.
	Serial uint32
	// Type forces FAT12, FAT16 or FAT32; TypeAuto chooses like mkfs.fat.
	Type Type
	// ClusterSize in bytes (512 to 65536, a power of two); 0 chooses like
	// mkfs.fat.
	ClusterSize int
	// Now is the time stamped on the volume label entry; zero means
	// time.Now().
	Now time.Time
}

// Format writes a new, empty FAT filesystem over the first size bytes of
// dev. It writes the reserved sectors, the FATs and the root directory (a
// quick format: the data area is left as it is) and writes the boot sector
// last, after first blanking it, so an interrupted Format never leaves a
// boot sector that describes half-written tables.
func Format(dev io.WriterAt, size int64, opts FormatOptions) error {
	if opts.ClusterSize != 0 && (opts.ClusterSize < mkfsSectorSize || !isPowerOfTwo(opts.ClusterSize) || opts.ClusterSize > 128*mkfsSectorSize) {
		return fmt.Errorf("fat: cluster size %d is not a power of two from 512 to 65536", opts.ClusterSize)
	}
	label, err := checkLabel(opts.Label)
	if err != nil {
		return err
	}
	l, err := mkfsLayout(size, opts.Type, opts.ClusterSize/mkfsSectorSize)
	if err != nil {
		return err
	}
	serial, err := fatcore.Serial(opts.Serial)
	if err != nil {
		return fmt.Errorf("fat: serial number: %w", err)
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	return writeLayout(dev, l, label, serial, now)
}

// checkLabel validates a label and returns it padded to 11 bytes, or
// "NO NAME    " for an empty one.
func checkLabel(s string) (string, error) {
	if s == "" {
		return "NO NAME    ", nil
	}
	if len(s) > 11 {
		return "", fmt.Errorf("fat: label %q is longer than 11 characters", s)
	}
	if s[0] == ' ' {
		return "", fmt.Errorf("fat: label %q starts with a space", s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7F || strings.IndexByte(`*?.,;:/\|+=<>[]"`, c) >= 0 {
			return "", fmt.Errorf("fat: label %q: character %q is not allowed", s, c)
		}
	}
	return fmt.Sprintf("%-11s", s), nil
}

// bootCode is a tiny real-mode program for the boot sector: it prints the
// message that follows it and waits for a key, then asks the BIOS to try
// the next boot device. It is position independent except for the message
// address, which writeBootSector patches in.
var bootCode = []byte{
	0x0E,             // push cs
	0x1F,             // pop ds
	0xBE, 0x00, 0x00, // mov si, message (patched)
	0xAC,       // next: lodsb
	0x08, 0xC0, // or al, al
	0x74, 0x09, // jz wait
	0xB4, 0x0E, // mov ah, 0Eh (teletype output)
	0xBB, 0x07, 0x00, // mov bx, 0007h
	0xCD, 0x10, // int 10h
	0xEB, 0xF2, // jmp next
	0x31, 0xC0, // wait: xor ax, ax
	0xCD, 0x16, // int 16h (read key)
	0xCD, 0x19, // int 19h (bootstrap loader)
	0xEB, 0xFE, // jmp $
}

const bootMessage = "Not a bootable disk (FAT volume formatted by cryptvol).\r\nPress a key to try the next device.\r\n\x00"

// bootSector builds sector 0 for layout l.
func bootSector(l *layout, label string, serial uint32) []byte {
	b := make([]byte, mkfsSectorSize)
	copy(b[3:11], "MSWIN4.1") // the OEM name Microsoft recommends for compatibility
	binary.LittleEndian.PutUint16(b[11:], mkfsSectorSize)
	b[13] = byte(l.sectorsPerCluster)
	binary.LittleEndian.PutUint16(b[14:], uint16(l.reservedSectors))
	b[16] = byte(l.numFATs)
	binary.LittleEndian.PutUint16(b[17:], uint16(l.rootEntries))
	if l.totalSectors < 65536 {
		binary.LittleEndian.PutUint16(b[19:], uint16(l.totalSectors))
	} else {
		binary.LittleEndian.PutUint32(b[32:], uint32(l.totalSectors))
	}
	b[21] = l.media
	binary.LittleEndian.PutUint16(b[24:], uint16(l.sectorsPerTrack))
	binary.LittleEndian.PutUint16(b[26:], uint16(l.heads))
	ext := 36
	fsType := fmt.Sprintf("FAT%d   ", int(l.typ))
	if l.typ == FAT32 {
		binary.LittleEndian.PutUint32(b[36:], uint32(l.fatSectors))
		binary.LittleEndian.PutUint32(b[44:], 2) // root directory cluster
		binary.LittleEndian.PutUint16(b[48:], uint16(l.fsInfoSector))
		binary.LittleEndian.PutUint16(b[50:], uint16(l.backupBoot))
		ext = 64
	} else {
		binary.LittleEndian.PutUint16(b[22:], uint16(l.fatSectors))
	}
	if l.media == 0xF8 {
		b[ext] = 0x80 // BIOS drive number of a hard disk
	}
	b[ext+2] = 0x29
	binary.LittleEndian.PutUint32(b[ext+3:], serial)
	copy(b[ext+7:ext+18], label)
	copy(b[ext+18:ext+26], fsType)
	code := ext + 26
	b[0], b[1], b[2] = 0xEB, byte(code-2), 0x90
	n := copy(b[code:], bootCode)
	msg := code + n
	binary.LittleEndian.PutUint16(b[code+3:], uint16(0x7C00+msg))
	copy(b[msg:510], bootMessage)
	b[510], b[511] = 0x55, 0xAA
	return b
}

// fsInfoSectorBytes builds a FAT32 FSInfo sector.
func fsInfoSectorBytes(free, next uint32) []byte {
	b := make([]byte, mkfsSectorSize)
	copy(b[0:], "RRaA")
	copy(b[484:], "rrAa")
	binary.LittleEndian.PutUint32(b[488:], free)
	binary.LittleEndian.PutUint32(b[492:], next)
	b[510], b[511] = 0x55, 0xAA
	return b
}

// writeLayout writes a fresh filesystem described by l.
func writeLayout(dev io.WriterAt, l *layout, label string, serial uint32, now time.Time) error {
	const ss = mkfsSectorSize
	zero := make([]byte, 64<<10)
	writeZeros := func(off, n int64) error {
		for n > 0 {
			k := int64(len(zero))
			if k > n {
				k = n
			}
			if _, err := dev.WriteAt(zero[:k], off); err != nil {
				return err
			}
			off += k
			n -= k
		}
		return nil
	}
	fail := func(what string, err error) error { return fmt.Errorf("fat: format: writing %s: %w", what, err) }

	// Blank the whole reserved area first, boot sector included, so a
	// crash before the end leaves no valid-looking boot sector behind.
	if err := writeZeros(0, int64(l.reservedSectors)*ss); err != nil {
		return fail("reserved sectors", err)
	}
	boot := bootSector(l, label, serial)
	if l.typ == FAT32 {
		info := fsInfoSectorBytes(uint32(l.clusterCount-1), 2)
		if _, err := dev.WriteAt(info, int64(l.fsInfoSector)*ss); err != nil {
			return fail("FSInfo sector", err)
		}
		if l.backupBoot != 0 {
			if _, err := dev.WriteAt(boot, int64(l.backupBoot)*ss); err != nil {
				return fail("backup boot sector", err)
			}
			if bi := l.backupBoot + l.fsInfoSector; bi < l.reservedSectors {
				if _, err := dev.WriteAt(info, int64(bi)*ss); err != nil {
					return fail("backup FSInfo sector", err)
				}
			}
		}
	}
	// FATs: entry 0 holds the media byte, entry 1 all ones, and on FAT32
	// entry 2 ends the root directory's chain.
	var head []byte
	switch l.typ {
	case FAT12:
		head = []byte{l.media, 0xFF, 0xFF}
	case FAT16:
		head = []byte{l.media, 0xFF, 0xFF, 0xFF}
	case FAT32:
		head = []byte{l.media, 0xFF, 0xFF, 0x0F, 0xFF, 0xFF, 0xFF, 0x0F, 0xF8, 0xFF, 0xFF, 0x0F}
	}
	fatBytes := l.fatSectors * ss
	for i := 0; i < l.numFATs; i++ {
		off := int64(l.reservedSectors)*ss + int64(i)*fatBytes
		if err := writeZeros(off, fatBytes); err != nil {
			return fail("FAT", err)
		}
		if _, err := dev.WriteAt(head, off); err != nil {
			return fail("FAT", err)
		}
	}
	// Root directory: the fixed area on FAT12/16, cluster 2 on FAT32.
	rootOff := int64(l.reservedSectors)*ss + int64(l.numFATs)*fatBytes
	rootBytes := int64(l.rootEntries) * 32
	if l.typ == FAT32 {
		rootBytes = int64(l.sectorsPerCluster) * ss
	}
	if err := writeZeros(rootOff, rootBytes); err != nil {
		return fail("root directory", err)
	}
	if label != "NO NAME    " {
		var e [32]byte
		copy(e[:11], label)
		e[11] = attrVolumeLabel
		d, t, _ := encodeTime(now, time.Local)
		binary.LittleEndian.PutUint16(e[14:], t)
		binary.LittleEndian.PutUint16(e[16:], d)
		binary.LittleEndian.PutUint16(e[18:], d)
		binary.LittleEndian.PutUint16(e[22:], t)
		binary.LittleEndian.PutUint16(e[24:], d)
		if _, err := dev.WriteAt(e[:], rootOff); err != nil {
			return fail("volume label", err)
		}
	}
	if _, err := dev.WriteAt(boot, 0); err != nil {
		return fail("boot sector", err)
	}
	return nil
}
