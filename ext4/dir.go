package ext4

import (
	"encoding/binary"
	"fmt"
	"io/fs"
)

// dirent is one name in a directory.
type dirent struct {
	name  string
	ino   uint32
	ftype uint8 // EXT4_FT_*: 1 file, 2 dir, 7 symlink, ...; 0 unknown
}

// dirCache is a directory read once, in on-disk order, with an index.
type dirCache struct {
	ents   []dirent
	byName map[string]int
}

// readDir returns the directory inode in's entries (without "." and
// ".."), from the cache if it was read before. Callers hold f.mu.
func (f *FS) readDir(in *inode) (*dirCache, error) {
	if d, ok := f.dirs[in.ino]; ok {
		return d, nil
	}
	if in.flags&flagEncrypt != 0 {
		return nil, fmt.Errorf("%w: directory inode %d is encrypted (fscrypt)", ErrUnsupported, in.ino)
	}
	d := &dirCache{byName: map[string]int{}}
	if in.flags&flagInlineData != 0 {
		data, err := in.inlineContent()
		if err != nil {
			return nil, err
		}
		// The first four bytes are the parent's inode number ("..");
		// entries follow, and continue in the system.data xattr.
		if len(data) < 4 {
			return nil, fmt.Errorf("%w: inline directory %d too short", ErrCorrupt, in.ino)
		}
		if err := f.parseDirBlock(d, in, data[4:min(len(data), 60)]); err != nil {
			return nil, err
		}
		if len(data) > 60 {
			if err := f.parseDirBlock(d, in, data[60:]); err != nil {
				return nil, err
			}
		}
	} else {
		runs, err := f.blockMap(in)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, f.blockSize)
		for _, r := range runs {
			if r.unwritten {
				continue
			}
			for i := uint64(0); i < r.length; i++ {
				if err := f.readBlock(buf, r.phys+i); err != nil {
					return nil, fmt.Errorf("directory inode %d: %w", in.ino, err)
				}
				if err := f.parseDirBlock(d, in, buf); err != nil {
					return nil, err
				}
			}
		}
	}
	f.dirs[in.ino] = d
	return d, nil
}

// parseDirBlock adds the entries of one directory block. Hash-tree
// (htree) index blocks look like a block holding one unused entry, and
// checksum tails like a 12-byte unused entry, so a linear scan skips both.
func (f *FS) parseDirBlock(d *dirCache, in *inode, b []byte) error {
	le := binary.LittleEndian
	for p := 0; p+8 <= len(b); {
		ino := le.Uint32(b[p:])
		recLen := int(le.Uint16(b[p+4:]))
		if f.blockSize >= 65536 { // ext4_rec_len_from_disk
			if recLen == 65535 || recLen == 0 {
				recLen = int(f.blockSize)
			} else {
				recLen = recLen&65532 | (recLen&3)<<16
			}
		}
		nameLen := int(b[p+6])
		ftype := b[p+7]
		if f.incompat&incompatFiletype == 0 {
			nameLen |= int(b[p+7]) << 8
			ftype = 0
		}
		if recLen < 8 || recLen&3 != 0 || p+recLen > len(b) || 8+nameLen > recLen {
			return fmt.Errorf("%w: directory inode %d: bad entry at offset %d", ErrCorrupt, in.ino, p)
		}
		if ino != 0 && nameLen > 0 {
			name := string(b[p+8 : p+8+nameLen])
			if name != "." && name != ".." {
				if ino > f.inodesCount {
					return fmt.Errorf("%w: directory inode %d: entry %q points to inode %d", ErrCorrupt, in.ino, name, ino)
				}
				if _, dup := d.byName[name]; !dup {
					d.byName[name] = len(d.ents)
					d.ents = append(d.ents, dirent{name: name, ino: ino, ftype: ftype})
				}
			}
		}
		p += recLen
	}
	return nil
}

// typeMode is the fs.FileMode type bits of a directory entry's file type.
func (e dirent) typeMode() (fs.FileMode, bool) {
	switch e.ftype {
	case 1:
		return 0, true
	case 2:
		return fs.ModeDir, true
	case 3:
		return fs.ModeDevice | fs.ModeCharDevice, true
	case 4:
		return fs.ModeDevice, true
	case 5:
		return fs.ModeNamedPipe, true
	case 6:
		return fs.ModeSocket, true
	case 7:
		return fs.ModeSymlink, true
	}
	return 0, false
}
