package ntfs

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
)

// Filename namespaces.
const (
	nsPOSIX = 0
	nsWin32 = 1
	nsDOS   = 2
	nsBoth  = 3
)

// fileName is a decoded $FILE_NAME (an index key, or an attribute).
type fileName struct {
	parent    uint64
	name      string
	namespace uint8
	flags     uint32 // file attributes; 0x10000000 marks a directory
}

func parseFileName(b []byte) (fileName, bool) {
	if len(b) < 0x42 {
		return fileName{}, false
	}
	n := int(b[0x40])
	if 0x42+2*n > len(b) {
		return fileName{}, false
	}
	le := binary.LittleEndian
	return fileName{
		parent:    le.Uint64(b) & (1<<48 - 1),
		flags:     le.Uint32(b[0x38:]),
		namespace: b[0x41],
		name:      utf16String(b[0x42 : 0x42+2*n]),
	}, true
}

// dirent is one name in a directory.
type dirent struct {
	name  string
	rec   uint64
	seq   uint16
	isDir bool
}

// dirCache is a directory read once, in index (collation) order, with an
// exact index by name and one by upper-cased name for the Win32 names
// (case-insensitive, as Windows looks them up).
type dirCache struct {
	ents   []dirent
	byName map[string]int
	byFold map[string]int
}

func (d *dirCache) lookup(name string) (dirent, bool) {
	if i, ok := d.byName[name]; ok {
		return d.ents[i], true
	}
	if i, ok := d.byFold[strings.ToUpper(name)]; ok {
		return d.ents[i], true
	}
	return dirent{}, false
}

// maxIndexDepth bounds the B+ tree walk (a real one is a few levels deep).
const maxIndexDepth = 32

// readDir reads the $I30 index of directory record num. Callers hold f.mu.
func (f *FS) readDir(file *mftFile) (*dirCache, error) {
	if d, ok := f.dirs[file.num]; ok {
		return d, nil
	}
	roots := find(file.attrs, atIndexRoot, "$I30")
	if len(roots) == 0 || !roots[0].resident {
		return nil, fmt.Errorf("%w: directory record %d has no $I30 index root", ErrCorrupt, file.num)
	}
	root := roots[0].value
	if len(root) < 0x20 {
		return nil, fmt.Errorf("%w: directory record %d: index root too short", ErrCorrupt, file.num)
	}
	le := binary.LittleEndian
	blockSize := int64(le.Uint32(root[8:]))
	if blockSize < 512 || blockSize > 65536 || blockSize&(blockSize-1) != 0 {
		blockSize = 0 // an error if a block is needed
	}
	w := &indexWalk{f: f, file: file, blockSize: blockSize, seen: map[int64]bool{},
		d: &dirCache{byName: map[string]int{}, byFold: map[string]int{}}}
	w.vcnSize = f.clusterSize
	if blockSize != 0 && blockSize < f.clusterSize {
		w.vcnSize = 512
	}
	if err := w.node(root[0x10:], 0); err != nil {
		return nil, err
	}
	f.dirs[file.num] = w.d
	return w.d, nil
}

type indexWalk struct {
	f         *FS
	file      *mftFile
	alloc     *stream
	blockSize int64
	vcnSize   int64
	seen      map[int64]bool
	d         *dirCache
}

// node walks one index node (an index header and its entries) in order:
// each entry's subtree first, then the entry.
func (w *indexWalk) node(h []byte, depth int) error {
	le := binary.LittleEndian
	if depth > maxIndexDepth || len(h) < 16 {
		return fmt.Errorf("%w: directory record %d: index too deep or truncated", ErrCorrupt, w.file.num)
	}
	start := int(le.Uint32(h))
	end := int(le.Uint32(h[4:]))
	if end > len(h) || start < 16 || start > end {
		return fmt.Errorf("%w: directory record %d: index header out of range", ErrCorrupt, w.file.num)
	}
	for p := start; ; {
		if p+16 > end {
			return fmt.Errorf("%w: directory record %d: index entries run past their node", ErrCorrupt, w.file.num)
		}
		length := int(le.Uint16(h[p+8:]))
		keyLen := int(le.Uint16(h[p+10:]))
		flags := le.Uint16(h[p+12:])
		if length < 16 || p+length > end || 16+keyLen > length {
			return fmt.Errorf("%w: directory record %d: index entry of length %d", ErrCorrupt, w.file.num, length)
		}
		if flags&1 != 0 { // a subnode precedes this entry
			if length < 24 {
				return fmt.Errorf("%w: directory record %d: index entry too short for its subnode", ErrCorrupt, w.file.num)
			}
			vcn := int64(le.Uint64(h[p+length-8:]))
			if err := w.block(vcn, depth+1); err != nil {
				return err
			}
		}
		if flags&2 != 0 { // the last entry carries no key
			return nil
		}
		ref := le.Uint64(h[p:])
		if fn, ok := parseFileName(h[p+16 : p+16+keyLen]); ok {
			w.add(fn, ref)
		}
		p += length
	}
}

// block reads index block vcn from $INDEX_ALLOCATION and walks it.
func (w *indexWalk) block(vcn int64, depth int) error {
	if w.blockSize == 0 {
		return fmt.Errorf("%w: directory record %d: bad index block size", ErrCorrupt, w.file.num)
	}
	if w.seen[vcn] {
		return fmt.Errorf("%w: directory record %d: index block %d visited twice", ErrCorrupt, w.file.num, vcn)
	}
	w.seen[vcn] = true
	if w.alloc == nil {
		s, err := w.f.newStream(w.file.attrs, atIndexAlloc, "$I30", w.file.num)
		if err != nil {
			return err
		}
		w.alloc = s
	}
	b := make([]byte, w.blockSize)
	off := vcn * w.vcnSize
	if vcn < 0 || off+w.blockSize > w.alloc.size || off/w.vcnSize != vcn {
		return fmt.Errorf("%w: directory record %d: index block %d out of range", ErrCorrupt, w.file.num, vcn)
	}
	if _, err := w.alloc.readAt(b, off); err != nil {
		return fmt.Errorf("directory record %d: index block %d: %w", w.file.num, vcn, err)
	}
	if string(b[:4]) != "INDX" {
		return fmt.Errorf("%w: directory record %d: index block %d has no INDX signature", ErrCorrupt, w.file.num, vcn)
	}
	if err := fixup(b, w.f.sectorSize); err != nil {
		return fmt.Errorf("directory record %d: index block %d: %w", w.file.num, vcn, err)
	}
	return w.node(b[0x18:], depth)
}

func (w *indexWalk) add(fn fileName, ref uint64) {
	rec := ref & (1<<48 - 1)
	if fn.namespace == nsDOS || fn.name == "" {
		return // the 8.3 alias of a long name listed on its own
	}
	if w.file.num == recRoot && rec < firstUserRec {
		return // $MFT, $Bitmap, ..., and the root's own "." entry
	}
	d := w.d
	if _, dup := d.byName[fn.name]; dup {
		return
	}
	i := len(d.ents)
	d.ents = append(d.ents, dirent{name: fn.name, rec: rec, seq: uint16(ref >> 48), isDir: fn.flags&0x10000000 != 0})
	d.byName[fn.name] = i
	if fn.namespace != nsPOSIX {
		if _, dup := d.byFold[strings.ToUpper(fn.name)]; !dup {
			d.byFold[strings.ToUpper(fn.name)] = i
		}
	}
}

// ntfsTime converts a FILETIME (100 ns since 1601-01-01 UTC).
func ntfsTime(t uint64) time.Time {
	const epochDiff = 116444736000000000 // 1601 to 1970 in 100 ns
	v := int64(t - epochDiff)
	if t < epochDiff {
		v = -int64(epochDiff - t)
	}
	return time.Unix(v/1e7, v%1e7*100).UTC()
}
