package exfat

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Directory entry types (specification section 6.2). Bit 7 is InUse; an
// entry whose bit 7 is clear is unused, and type 0x00 ends the directory.
const (
	typeEnd         = 0x00
	typeBitmap      = 0x81
	typeUpcase      = 0x82
	typeVolumeLabel = 0x83
	typeFile        = 0x85
	typeGUID        = 0xA0
	typeStream      = 0xC0
	typeName        = 0xC1

	entryInUse     = 0x80
	entrySecondary = 0x40 // TypeCategory: 1 for secondary entries
	entryBenign    = 0x20 // TypeImportance: 1 for benign entries

	// GeneralSecondaryFlags of the stream extension.
	flagAllocPossible = 1 << 0
	flagNoFatChain    = 1 << 1

	eocCluster = 0xFFFFFFFF
	badCluster = 0xFFFFFFF7

	nameUnitsPerEntry = 15
	maxNameUnits      = 255
	entrySize         = 32
)

// Attr holds the file attribute bits, the same as FAT's.
type Attr uint16

const (
	AttrReadOnly Attr = fatcore.AttrReadOnly
	AttrHidden   Attr = fatcore.AttrHidden
	AttrSystem   Attr = fatcore.AttrSystem
	AttrDir      Attr = fatcore.AttrDir
	AttrArchive  Attr = fatcore.AttrArchive
)

// entry is one file or directory: the fields of its File and Stream
// Extension entries, decoded, and where its entry set lives.
type entry struct {
	dir    *dirCache
	slot   int // the File entry
	nslots int // 1 + SecondaryCount

	name  string
	units []uint16
	key   string

	attr                Attr
	ctime, mtime, atime uint32 // timestamps (section 7.4.8)
	c10, m10            byte   // 10 ms increments
	ctz, mtz, atz       byte   // UTC offsets
	flags               byte   // GeneralSecondaryFlags
	start               uint32 // FirstCluster
	size                uint64 // DataLength
	valid               uint64 // ValidDataLength
	extra               []byte // benign secondary entries after the names, kept as they are

	node    *node // shared state of open handles
	pending bool  // the set has never been written
	fill    int   // first slot to write with a pending set (filler entries before it)
}

func (e *entry) isDir() bool      { return e.attr&AttrDir != 0 }
func (e *entry) noFatChain() bool { return e.flags&flagNoFatChain != 0 }

// forget drops n as e's open file when the last handle closes (unless a
// rename over e detached n onto a copy of it already).
func (e *entry) forget(n *node) {
	if e.node == n {
		e.node = nil
	}
}

// entryChecksum is the SetChecksum of section 6.3.3 over a whole entry
// set, skipping the checksum field itself.
func entryChecksum(set []byte) uint16 {
	var sum uint16
	for i, b := range set {
		if i == 2 || i == 3 {
			continue
		}
		sum = bits.RotateLeft16(sum, -1) + uint16(b)
	}
	return sum
}

// nameEntries is how many File Name entries a name of n units needs.
func nameEntries(n int) int { return (n + nameUnitsPerEntry - 1) / nameUnitsPerEntry }

// setSlots is the length of e's entry set in slots.
func (e *entry) setSlots() int { return 2 + nameEntries(len(e.units)) + len(e.extra)/entrySize }

// encode writes e's entry set into p (setSlots()*32 bytes), with its
// checksum and the name hash from t.
func (e *entry) encode(p []byte, t upcaseTable) {
	le := binary.LittleEndian
	clear(p)
	n := e.setSlots()
	f := p[0:32]
	f[0] = typeFile
	f[1] = byte(n - 1)
	le.PutUint16(f[4:], uint16(e.attr))
	le.PutUint32(f[8:], e.ctime)
	le.PutUint32(f[12:], e.mtime)
	le.PutUint32(f[16:], e.atime)
	f[20], f[21] = e.c10, e.m10
	f[22], f[23], f[24] = e.ctz, e.mtz, e.atz
	s := p[32:64]
	s[0] = typeStream
	s[1] = e.flags
	s[3] = byte(len(e.units))
	le.PutUint16(s[4:], t.nameHash(e.units))
	le.PutUint64(s[8:], e.valid)
	le.PutUint32(s[20:], e.start)
	le.PutUint64(s[24:], e.size)
	for i := 0; i < nameEntries(len(e.units)); i++ {
		ne := p[64+32*i : 96+32*i]
		ne[0] = typeName
		for k := 0; k < nameUnitsPerEntry; k++ {
			if j := i*nameUnitsPerEntry + k; j < len(e.units) {
				le.PutUint16(ne[2+2*k:], e.units[j])
			}
		}
	}
	copy(p[(n-len(e.extra)/entrySize)*32:], e.extra)
	le.PutUint16(f[2:], entryChecksum(p[:n*32]))
}

// decodeSet parses the entry set that starts with the File entry at p[0]
// (p holds at least the whole set). It returns why the set is invalid, or
// "" — and in that case whether only the checksum or name hash is wrong
// (fixable: the set is otherwise whole).
func decodeSet(p []byte, t upcaseTable) (e *entry, why string, fixable bool) {
	le := binary.LittleEndian
	n := int(p[1]) + 1
	if n < 3 || n > 19 {
		return nil, fmt.Sprintf("file entry with %d secondary entries", n-1), false
	}
	if len(p) < n*32 {
		return nil, fmt.Sprintf("entry set of %d entries runs past the end of the directory", n), false
	}
	f, s := p[0:32], p[32:64]
	if s[0] != typeStream {
		return nil, fmt.Sprintf("first secondary entry has type %#02x, not a stream extension", s[0]), false
	}
	e = &entry{
		nslots: n,
		attr:   Attr(le.Uint16(f[4:])),
		ctime:  le.Uint32(f[8:]), mtime: le.Uint32(f[12:]), atime: le.Uint32(f[16:]),
		c10: f[20], m10: f[21], ctz: f[22], mtz: f[23], atz: f[24],
		flags: s[1],
		valid: le.Uint64(s[8:]),
		start: le.Uint32(s[20:]),
		size:  le.Uint64(s[24:]),
	}
	nameLen := int(s[3])
	if nameLen == 0 {
		return nil, "name length 0", false
	}
	ne := nameEntries(nameLen)
	if 2+ne > n {
		return nil, fmt.Sprintf("name of %d units needs %d name entries, the set has %d secondary entries", nameLen, ne, n-1), false
	}
	e.units = make([]uint16, 0, nameLen)
	for i := 0; i < ne; i++ {
		q := p[64+32*i : 96+32*i]
		if q[0] != typeName {
			return nil, fmt.Sprintf("secondary entry %d has type %#02x, not a file name", 2+i, q[0]), false
		}
		for k := 0; k < nameUnitsPerEntry && len(e.units) < nameLen; k++ {
			e.units = append(e.units, le.Uint16(q[2+2*k:]))
		}
	}
	for i := 2 + ne; i < n; i++ {
		q := p[32*i : 32*i+32]
		if q[0]&entryInUse == 0 || q[0]&entrySecondary == 0 {
			return nil, fmt.Sprintf("secondary entry %d has type %#02x", i, q[0]), false
		}
		if q[0]&entryBenign == 0 {
			return nil, fmt.Sprintf("unknown critical secondary entry %#02x", q[0]), false
		}
	}
	e.extra = append([]byte(nil), p[(2+ne)*32:n*32]...)
	e.name = string(utf16.Decode(e.units))
	if e.valid > e.size {
		return nil, fmt.Sprintf("valid data length %d is larger than the data length %d", e.valid, e.size), false
	}
	if e.start == 0 && e.size != 0 {
		return nil, fmt.Sprintf("%d bytes without a first cluster", e.size), false
	}
	if got, want := le.Uint16(f[2:]), entryChecksum(p[:n*32]); got != want {
		return e, fmt.Sprintf("entry set checksum %#04x, should be %#04x", got, want), true
	}
	if got, want := le.Uint16(s[4:]), t.nameHash(e.units); got != want {
		return e, fmt.Sprintf("name hash %#04x, should be %#04x", got, want), true
	}
	return e, "", false
}

// checkName checks that name can be stored and returns it as UTF-16.
func checkName(name string) ([]uint16, error) {
	if name == "" || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if !utf8.ValidString(name) {
		return nil, fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalidName, name)
	}
	for _, r := range name {
		if r < 0x20 || strings.ContainsRune(`"*/:<>?\|`, r) {
			return nil, fmt.Errorf("%w: %q contains %q", ErrInvalidName, name, r)
		}
	}
	if last := name[len(name)-1]; last == ' ' || last == '.' {
		return nil, fmt.Errorf("%w: %q ends in %q", ErrInvalidName, name, last)
	}
	u := nameUnits(name)
	if len(u) > maxNameUnits {
		return nil, fmt.Errorf("%w: %q is %d UTF-16 units long, at most %d fit", ErrInvalidName, name, len(u), maxNameUnits)
	}
	return u, nil
}

// nameUnits is the UTF-16 form entries hold of a name checkName accepted.
func nameUnits(name string) []uint16 { return utf16.Encode([]rune(name)) }

// exFAT timestamps (section 7.4.8) are local date and time fields with
// two-second steps, a 10 ms increment byte (create and modify times) and
// a UTC offset byte in 15-minute units whose bit 7 says it is valid.

var (
	exfatEpoch = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	exfatEnd   = time.Date(2107, 12, 31, 23, 59, 59, 990_000_000, time.UTC)
)

// encodeTime converts t to a timestamp, its 10 ms increment and its UTC
// offset byte, in loc's offset at t.
func encodeTime(t time.Time, loc *time.Location) (ts uint32, ms10, tz byte) {
	if t.IsZero() {
		return 0, 0, 0
	}
	w := t.In(loc)
	_, off := w.Zone()
	if off%900 == 0 && off >= -64*900 && off <= 63*900 {
		tz = 0x80 | byte(off/900)&0x7F
	}
	wall := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
	if wall.Before(exfatEpoch) {
		wall = exfatEpoch
	}
	if wall.After(exfatEnd) {
		wall = exfatEnd
	}
	ts = uint32(wall.Year()-1980)<<25 | uint32(wall.Month())<<21 | uint32(wall.Day())<<16 |
		uint32(wall.Hour())<<11 | uint32(wall.Minute())<<5 | uint32(wall.Second()/2)
	ms10 = byte(wall.Second()%2*100 + wall.Nanosecond()/10_000_000)
	return ts, ms10, tz
}

// decodeTime converts a timestamp back to a time: in its UTC offset when
// that is valid, else in loc. An invalid date gives the zero time.
func decodeTime(ts uint32, ms10, tz byte, loc *time.Location) time.Time {
	year := int(ts>>25) + 1980
	month := int(ts>>21) & 0x0F
	day := int(ts>>16) & 0x1F
	if ts == 0 || month < 1 || month > 12 || day < 1 {
		return time.Time{}
	}
	hour, min, sec := int(ts>>11)&0x1F, int(ts>>5)&0x3F, int(ts&0x1F)*2
	if hour > 23 || min > 59 || sec > 59 {
		hour, min, sec = 0, 0, 0
	}
	if ms10 > 199 {
		ms10 = 0
	}
	if tz&0x80 != 0 {
		off := int(int8(tz<<1)>>1) * 900
		loc = time.FixedZone("", off)
	}
	return time.Date(year, time.Month(month), day, hour, min, sec, 0, loc).Add(time.Duration(ms10) * 10 * time.Millisecond)
}

func (e *entry) setCreated(t time.Time, loc *time.Location) {
	e.ctime, e.c10, e.ctz = encodeTime(t, loc)
	e.mtime, e.m10, e.mtz = e.ctime, e.c10, e.ctz
	e.atime, _, e.atz = encodeTime(t, loc)
}

func (e *entry) setModified(t time.Time, loc *time.Location) {
	e.mtime, e.m10, e.mtz = encodeTime(t, loc)
	e.atime, _, e.atz = e.mtime, 0, e.mtz
}

// touch records a change to the content: modified now, and not yet
// backed up (the archive bit).
func (e *entry) touch(t time.Time, loc *time.Location) {
	e.setModified(t, loc)
	e.attr |= AttrArchive
}

// ValidateName reports whether name (one path component) can be stored:
// at most 255 UTF-16 units, none of "*/:<>?\| or control characters, not
// ending in a space or a dot, and not "." or "..". Every write checks it;
// callers check it first to refuse a command before anything is written.
func ValidateName(name string) error {
	_, err := checkName(name)
	return err
}
