package fat

import (
	"encoding/binary"
	"time"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// Attr holds the DOS attribute bits of a file or directory.
type Attr uint8

// Attribute bits.
const (
	AttrReadOnly Attr = fatcore.AttrReadOnly
	AttrHidden   Attr = fatcore.AttrHidden
	AttrSystem   Attr = fatcore.AttrSystem
	AttrDir      Attr = fatcore.AttrDir
	AttrArchive  Attr = fatcore.AttrArchive
)

const (
	attrVolumeLabel = 0x08
	attrLFN         = 0x0F // read-only|hidden|system|volume: a long-name slot
	slotDeleted     = 0xE5
)

// entry is one live file or directory in a cached directory: its names,
// where its slots are, and its metadata as this process knows it. For a
// file being written, start and size run ahead of what the directory
// sector on disk says until the file is committed (see node).
type entry struct {
	dir    *dirCache
	name   string // long name, or the short name as shown
	key    string // foldName(name)
	short  shortName
	nt     byte // case flags
	slot   int  // index of the 8.3 slot
	nslots int  // slots used, long-name slots included

	attr  Attr
	start uint32
	size  uint32

	cdate, ctime uint16
	ccenti       byte
	adate        uint16
	mdate, mtime uint16

	node    *node // non-nil while the file is open
	pending bool  // a new entry not yet written to disk

	damage     string // why the entry cannot be valid ("" when it is)
	damageKind int    // damageNone, damageName or damageData (dir.go)
	dup        bool   // another entry of the directory has the same name
}

func (e *entry) isDir() bool { return e.attr&AttrDir != 0 }

// forget drops n as e's open file when the last handle closes (unless a
// rename over e detached n onto a copy of it already).
func (e *entry) forget(n *node) {
	if e.node == n {
		e.node = nil
	}
}

// ntMoving is a bit of the 8.3 slot's NT byte (offset 12) that this package
// sets on the source entry of a rename for the moment when the source and
// the new entry both exist (see Rename): it tells recovery which of the two
// is the stale one. Windows and Linux use only bits 0x08 and 0x10 of that
// byte (lower-case name and extension), dosfstools also 0x20; 0x40 is used
// by none of them.
const ntMoving = 0x40

// ntNo83Name is dosfstools' FAT_NO_83NAME: the 8.3 name is a dummy, only
// the long name counts (written by some patched Linux kernels).
const ntNo83Name = 0x20

// moving reports whether the entry carries the rename mark.
func (e *entry) moving() bool { return e.nt&ntMoving != 0 }

// firstSlot is the index of the entry's first slot.
func (e *entry) firstSlot() int { return e.slot - e.nslots + 1 }

// encodeShort writes the 8.3 slot of e into p (32 bytes).
func (e *entry) encodeShort(p []byte) {
	copy(p[0:11], e.short[:])
	if p[0] == slotDeleted {
		p[0] = 0x05
	}
	p[11] = byte(e.attr)
	p[12] = e.nt
	p[13] = e.ccenti
	binary.LittleEndian.PutUint16(p[14:], e.ctime)
	binary.LittleEndian.PutUint16(p[16:], e.cdate)
	binary.LittleEndian.PutUint16(p[18:], e.adate)
	binary.LittleEndian.PutUint16(p[20:], uint16(e.start>>16))
	binary.LittleEndian.PutUint16(p[22:], e.mtime)
	binary.LittleEndian.PutUint16(p[24:], e.mdate)
	binary.LittleEndian.PutUint16(p[26:], uint16(e.start))
	size := e.size
	if e.isDir() {
		size = 0
	}
	binary.LittleEndian.PutUint32(p[28:], size)
}

// decodeShort fills e's metadata from an 8.3 slot.
func (e *entry) decodeShort(p []byte) {
	copy(e.short[:], p[0:11])
	if e.short[0] == 0x05 {
		e.short[0] = slotDeleted
	}
	e.attr = Attr(p[11])
	e.nt = p[12]
	e.ccenti = p[13]
	e.ctime = binary.LittleEndian.Uint16(p[14:])
	e.cdate = binary.LittleEndian.Uint16(p[16:])
	e.adate = binary.LittleEndian.Uint16(p[18:])
	e.start = uint32(binary.LittleEndian.Uint16(p[20:]))<<16 | uint32(binary.LittleEndian.Uint16(p[26:]))
	e.mtime = binary.LittleEndian.Uint16(p[22:])
	e.mdate = binary.LittleEndian.Uint16(p[24:])
	e.size = binary.LittleEndian.Uint32(p[28:])
}

// setTimes stamps creation, modification and access times.
func (e *entry) setCreated(t time.Time, loc *time.Location) {
	e.cdate, e.ctime, e.ccenti = encodeTime(t, loc)
	e.mdate, e.mtime, _ = encodeTime(t, loc)
	e.adate = e.cdate
}

func (e *entry) setModified(t time.Time, loc *time.Location) {
	e.mdate, e.mtime, _ = encodeTime(t, loc)
	e.adate = e.mdate
}

// touch records a change to the content: modified now, and not yet
// backed up (the archive bit).
func (e *entry) touch(t time.Time, loc *time.Location) {
	e.setModified(t, loc)
	e.attr |= AttrArchive
}
