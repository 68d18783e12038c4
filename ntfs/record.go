package ntfs

import (
	"encoding/binary"
	"fmt"
	"sort"
	"unicode/utf16"
)

// Attribute types.
const (
	atStandardInfo = 0x10
	atAttrList     = 0x20
	atFileName     = 0x30
	atVolumeName   = 0x60
	atData         = 0x80
	atIndexRoot    = 0x90
	atIndexAlloc   = 0xA0
	atReparse      = 0xC0
	atEnd          = 0xFFFFFFFF
)

// Attribute flags.
const (
	attrCompressed = 0x0001
	attrEncrypted  = 0x4000
	attrSparse     = 0x8000
)

// attr is one attribute record (or one piece of a non-resident attribute
// that spans several records: lowVCN tells which).
type attr struct {
	typ      uint32
	name     string
	flags    uint16
	resident bool
	value    []byte // resident value

	lowVCN, highVCN int64
	runs            []dataRun
	compUnit        uint8 // log2 of clusters per compression unit
	allocSize       int64 // meaningful where lowVCN == 0
	dataSize        int64
	initSize        int64
}

// mftFile is a file's base record with the attributes of all its records.
type mftFile struct {
	num     uint64
	seq     uint16
	dir     bool // the record's directory flag
	hasList bool
	attrs   []*attr
	list    []listEntry // the attribute list, if any
}

// parseRecord applies the update sequence of an MFT record and decodes its
// attributes. num is the record number the data was read for.
func (f *FS) parseRecord(b []byte, num uint64) (*mftFile, error) {
	if string(b[0:4]) != "FILE" {
		return nil, fmt.Errorf("%w: MFT record %d has no FILE signature", ErrCorrupt, num)
	}
	if err := fixup(b, f.sectorSize); err != nil {
		return nil, fmt.Errorf("MFT record %d: %w", num, err)
	}
	le := binary.LittleEndian
	flags := le.Uint16(b[0x16:])
	if flags&1 == 0 {
		return nil, fmt.Errorf("%w: MFT record %d is not in use", ErrCorrupt, num)
	}
	used := int(le.Uint32(b[0x18:]))
	if used > len(b) || used < 0x30 {
		used = len(b)
	}
	rec := &mftFile{num: num, seq: le.Uint16(b[0x10:]), dir: flags&2 != 0}
	p := int(le.Uint16(b[0x14:]))
	for {
		if p+8 > used || p < 0x18 {
			return nil, fmt.Errorf("%w: MFT record %d: attributes run past its end", ErrCorrupt, num)
		}
		typ := le.Uint32(b[p:])
		if typ == atEnd {
			break
		}
		n := int(le.Uint32(b[p+4:]))
		if n < 0x18 || n&7 != 0 || p+n > used {
			return nil, fmt.Errorf("%w: MFT record %d: attribute %#x of length %d", ErrCorrupt, num, typ, n)
		}
		a, err := parseAttr(b[p:p+n], typ)
		if err != nil {
			return nil, fmt.Errorf("MFT record %d: %w", num, err)
		}
		if typ == atAttrList {
			rec.hasList = true
		}
		rec.attrs = append(rec.attrs, a)
		p += n
	}
	return rec, nil
}

// fixup checks and undoes the update sequence array of a multi-sector
// record: the last two bytes of every 512-byte stride were replaced by
// the sequence number when written.
func fixup(b []byte, sectorSize int64) error {
	le := binary.LittleEndian
	off := int(le.Uint16(b[4:]))
	count := int(le.Uint16(b[6:]))
	strides := len(b) / 512
	if count != strides+1 || off+2*count > len(b) || off < 8 {
		return fmt.Errorf("%w: update sequence of %d entries at %d in a %d-byte record", ErrCorrupt, count, off, len(b))
	}
	usn := b[off : off+2]
	for i := 1; i < count; i++ {
		end := i*512 - 2
		if b[end] != usn[0] || b[end+1] != usn[1] {
			return fmt.Errorf("%w: torn write (update sequence mismatch in sector %d)", ErrCorrupt, i-1)
		}
		b[end], b[end+1] = b[off+2*i], b[off+2*i+1]
	}
	return nil
}

func parseAttr(b []byte, typ uint32) (*attr, error) {
	le := binary.LittleEndian
	a := &attr{typ: typ, flags: le.Uint16(b[0xC:])}
	nameLen := int(b[9])
	nameOff := int(le.Uint16(b[0xA:]))
	if nameLen > 0 {
		if nameOff+2*nameLen > len(b) {
			return nil, fmt.Errorf("%w: attribute %#x name out of range", ErrCorrupt, typ)
		}
		a.name = utf16String(b[nameOff : nameOff+2*nameLen])
	}
	if b[8] == 0 {
		a.resident = true
		vlen := int(le.Uint32(b[0x10:]))
		voff := int(le.Uint16(b[0x14:]))
		if voff+vlen > len(b) || vlen < 0 {
			return nil, fmt.Errorf("%w: resident attribute %#x value out of range", ErrCorrupt, typ)
		}
		a.value = b[voff : voff+vlen]
		a.dataSize, a.initSize, a.allocSize = int64(vlen), int64(vlen), int64(vlen)
		return a, nil
	}
	if len(b) < 0x40 {
		return nil, fmt.Errorf("%w: non-resident attribute %#x header too short", ErrCorrupt, typ)
	}
	a.lowVCN = int64(le.Uint64(b[0x10:]))
	a.highVCN = int64(le.Uint64(b[0x18:]))
	mpOff := int(le.Uint16(b[0x20:]))
	a.compUnit = b[0x22]
	a.allocSize = int64(le.Uint64(b[0x28:]))
	a.dataSize = int64(le.Uint64(b[0x30:]))
	a.initSize = int64(le.Uint64(b[0x38:]))
	if a.lowVCN < 0 || a.highVCN < a.lowVCN-1 || a.dataSize < 0 || a.initSize < 0 || a.allocSize < 0 || a.compUnit > 16 {
		return nil, fmt.Errorf("%w: non-resident attribute %#x: VCNs %d-%d, size %d", ErrCorrupt, typ, a.lowVCN, a.highVCN, a.dataSize)
	}
	if mpOff > len(b) {
		return nil, fmt.Errorf("%w: attribute %#x mapping pairs out of range", ErrCorrupt, typ)
	}
	runs, err := decodeRuns(b[mpOff:], a.lowVCN)
	if err != nil {
		return nil, fmt.Errorf("attribute %#x: %w", typ, err)
	}
	a.runs = runs
	return a, nil
}

// listEntry is one line of an attribute list: where a piece of an
// attribute lives.
type listEntry struct {
	typ    uint32
	name   string
	lowVCN int64
	ref    uint64 // record number (low 48 bits of the reference)
}

// completeFile adds to rec the attributes that its attribute list places
// in extension records. Callers hold f.mu, except during Open.
func (f *FS) completeFile(rec *mftFile) (*mftFile, error) {
	var la *attr
	for _, a := range rec.attrs {
		if a.typ == atAttrList {
			la = a
		}
	}
	var list []byte
	if la.resident {
		list = la.value
	} else {
		s, err := f.newStream([]*attr{la}, atAttrList, la.name, rec.num)
		if err != nil {
			return nil, err
		}
		if s.size > 1<<24 {
			return nil, fmt.Errorf("%w: attribute list of %d bytes", ErrCorrupt, s.size)
		}
		list = make([]byte, s.size)
		if _, err := s.readAt(list, 0); err != nil {
			return nil, err
		}
	}
	le := binary.LittleEndian
	seen := map[uint64]bool{rec.num: true}
	out := &mftFile{num: rec.num, seq: rec.seq, dir: rec.dir, hasList: true}
	for _, a := range rec.attrs {
		if a.typ != atAttrList {
			out.attrs = append(out.attrs, a)
		}
	}
	for p := 0; p+0x1A <= len(list); {
		n := int(le.Uint16(list[p+4:]))
		if n < 0x1A || p+n > len(list) {
			return nil, fmt.Errorf("%w: record %d: attribute list entry of length %d", ErrCorrupt, rec.num, n)
		}
		e := listEntry{typ: le.Uint32(list[p:]), lowVCN: int64(le.Uint64(list[p+8:])), ref: le.Uint64(list[p+0x10:]) & (1<<48 - 1)}
		nl, no := int(list[p+6]), int(list[p+7])
		if no+2*nl <= n {
			e.name = utf16String(list[p+no : p+no+2*nl])
		}
		out.list = append(out.list, e)
		p += n
		if seen[e.ref] {
			continue
		}
		seen[e.ref] = true
		ext, err := f.readRecord(e.ref)
		if err != nil {
			return nil, fmt.Errorf("record %d: extension: %w", rec.num, err)
		}
		out.attrs = append(out.attrs, ext.attrs...)
	}
	return out, nil
}

// readRecord reads and parses MFT record num through the $MFT's map.
func (f *FS) readRecord(num uint64) (*mftFile, error) {
	if f.mft == nil || num >= uint64(f.mft.size/f.recordSize) {
		return nil, fmt.Errorf("%w: MFT record %d out of range", ErrCorrupt, num)
	}
	buf := make([]byte, f.recordSize)
	if _, err := f.mft.readAt(buf, int64(num)*f.recordSize); err != nil {
		return nil, fmt.Errorf("MFT record %d: %w", num, err)
	}
	return f.parseRecord(buf, num)
}

// file returns MFT record num with all its attributes, cached. Callers
// hold f.mu.
func (f *FS) file(num uint64) (*mftFile, error) {
	if r, ok := f.records[num]; ok {
		return r, nil
	}
	rec, err := f.readRecord(num)
	if err != nil {
		return nil, err
	}
	if rec.hasList {
		if rec, err = f.completeFile(rec); err != nil {
			return nil, err
		}
	}
	if len(f.records) > 8192 {
		clear(f.records)
	}
	f.records[num] = rec
	return rec, nil
}

// find returns the pieces of the attribute typ/name, by starting VCN.
func find(attrs []*attr, typ uint32, name string) []*attr {
	var out []*attr
	for _, a := range attrs {
		if a.typ == typ && a.name == name {
			out = append(out, a)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].lowVCN < out[j].lowVCN })
	return out
}

func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}
