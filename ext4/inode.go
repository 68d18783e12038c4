package ext4

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"time"
)

const (
	rootIno = 2

	flagIndex      = 0x1000     // hashed directory
	flagExtents    = 0x80000    // i_block holds an extent tree
	flagEAInode    = 0x200000   // inode holds a large xattr value
	flagInlineData = 0x10000000 // data in i_block and the system.data xattr
	flagEncrypt    = 0x800      // fscrypt
	flagHugeFile   = 0x40000    // i_blocks counts filesystem blocks

	sIFMT   = 0xF000
	sIFSOCK = 0xC000
	sIFLNK  = 0xA000
	sIFREG  = 0x8000
	sIFBLK  = 0x6000
	sIFDIR  = 0x4000
	sIFCHR  = 0x2000
	sIFIFO  = 0x1000
)

// inode is the decoded part of an on-disk inode.
type inode struct {
	ino        uint32
	mode       uint16
	uid, gid   uint32
	size       int64
	links      uint16
	flags      uint32
	blocks512  uint64 // i_blocks in 512-byte units
	fileACL    uint64
	block      [60]byte // i_block: extent root, block map or inline data
	atime      time.Time
	mtime      time.Time
	ctime      time.Time
	crtime     time.Time // zero when the inode has no room for it
	inlineXatt []byte    // the in-inode xattr area (after i_extra_isize)
}

// readInode loads inode ino. Callers hold f.mu.
func (f *FS) readInode(ino uint32) (*inode, error) {
	if ino == 0 || ino > f.inodesCount {
		return nil, fmt.Errorf("%w: inode %d out of range", ErrCorrupt, ino)
	}
	g := (ino - 1) / f.inodesPerGroup
	idx := int64((ino - 1) % f.inodesPerGroup)
	off := idx * f.inodeSize
	blk := f.groupTables[g] + uint64(off/f.blockSize)
	b, err := f.cachedBlock(blk)
	if err != nil {
		return nil, fmt.Errorf("inode %d: %w", ino, err)
	}
	raw := b[off%f.blockSize : off%f.blockSize+f.inodeSize]
	le := binary.LittleEndian
	in := &inode{
		ino:       ino,
		mode:      le.Uint16(raw[0:]),
		uid:       uint32(le.Uint16(raw[2:])) | uint32(le.Uint16(raw[0x78:]))<<16,
		gid:       uint32(le.Uint16(raw[0x18:])) | uint32(le.Uint16(raw[0x7A:]))<<16,
		size:      int64(uint64(le.Uint32(raw[4:])) | uint64(le.Uint32(raw[0x6C:]))<<32),
		links:     le.Uint16(raw[0x1A:]),
		flags:     le.Uint32(raw[0x20:]),
		blocks512: uint64(le.Uint32(raw[0x1C:])) | uint64(le.Uint16(raw[0x74:]))<<32,
		fileACL:   uint64(le.Uint32(raw[0x68:])) | uint64(le.Uint16(raw[0x76:]))<<32,
	}
	if in.flags&flagHugeFile != 0 && f.roCompat&roCompatHugeFile != 0 {
		in.blocks512 *= uint64(f.blockSize / 512)
	}
	if in.size < 0 {
		return nil, fmt.Errorf("%w: inode %d has size %d", ErrCorrupt, ino, in.size)
	}
	copy(in.block[:], raw[0x28:0x28+60])
	extra := int64(0)
	if f.inodeSize > 128 {
		extra = int64(le.Uint16(raw[0x80:]))
		if 128+extra > f.inodeSize || extra&3 != 0 {
			extra = 0 // a damaged i_extra_isize: ignore the extra fields
		}
	}
	// A timestamp field exists when the inode's extra space covers it.
	stamp := func(secOff, extraOff int) time.Time {
		sec := int64(int32(le.Uint32(raw[secOff:])))
		if extraOff != 0 && int64(extraOff)+4 <= 128+extra {
			x := le.Uint32(raw[extraOff:])
			sec += int64(x&3) << 32
			return time.Unix(sec, int64(x>>2)%1e9)
		}
		return time.Unix(sec, 0)
	}
	in.atime = stamp(0x8, 0x8C)
	in.ctime = stamp(0xC, 0x84)
	in.mtime = stamp(0x10, 0x88)
	if 0x94+4 <= 128+extra {
		in.crtime = stamp(0x90, 0x94)
	}
	if 128+extra+4 <= f.inodeSize {
		in.inlineXatt = raw[128+extra:]
	}
	return in, nil
}

func (in *inode) isDir() bool     { return in.mode&sIFMT == sIFDIR }
func (in *inode) isSymlink() bool { return in.mode&sIFMT == sIFLNK }

// fileMode converts the inode's mode to an io/fs FileMode.
func (in *inode) fileMode() fs.FileMode {
	m := fs.FileMode(in.mode & 0o777)
	if in.mode&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if in.mode&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if in.mode&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	switch in.mode & sIFMT {
	case sIFDIR:
		m |= fs.ModeDir
	case sIFLNK:
		m |= fs.ModeSymlink
	case sIFIFO:
		m |= fs.ModeNamedPipe
	case sIFSOCK:
		m |= fs.ModeSocket
	case sIFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case sIFBLK:
		m |= fs.ModeDevice
	case sIFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}

// inlineData returns the system.data xattr value (the part of an inline
// file past the 60 bytes of i_block), or nil.
func (in *inode) inlineDataXattr() ([]byte, error) {
	x := in.inlineXatt
	le := binary.LittleEndian
	if len(x) < 4 || le.Uint32(x) != 0xEA020000 {
		return nil, nil
	}
	body := x[4:]
	for p := 0; p+16 <= len(body); {
		nameLen := int(body[p])
		index := body[p+1]
		valOff := int(le.Uint16(body[p+2:]))
		valInum := le.Uint32(body[p+4:])
		valSize := int(le.Uint32(body[p+8:]))
		if nameLen == 0 && index == 0 && valOff == 0 && valInum == 0 {
			break // end of entries (four zero bytes)
		}
		if p+16+nameLen > len(body) {
			break
		}
		name := string(body[p+16 : p+16+nameLen])
		if index == 7 && name == "data" {
			if valInum != 0 || valOff+valSize > len(body) {
				return nil, fmt.Errorf("%w: inode %d: inline data xattr out of range", ErrCorrupt, in.ino)
			}
			return body[valOff : valOff+valSize], nil
		}
		p += (16 + nameLen + 3) &^ 3
	}
	return nil, nil
}

// inlineContent is the whole content of an inline-data inode.
func (in *inode) inlineContent() ([]byte, error) {
	x, err := in.inlineDataXattr()
	if err != nil {
		return nil, err
	}
	data := append(append([]byte{}, in.block[:]...), x...)
	if int64(len(data)) < in.size {
		return nil, fmt.Errorf("%w: inode %d: inline data holds %d of %d bytes", ErrCorrupt, in.ino, len(data), in.size)
	}
	return data[:in.size], nil
}
