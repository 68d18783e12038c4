package ntfs

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/cryptvol/cryptvol/internal/fspath"
)

// File attribute bits ($STANDARD_INFORMATION and $FILE_NAME).
const (
	faReadOnly  = 0x0001
	faHidden    = 0x0002
	faSystem    = 0x0004
	faDirectory = 0x0010
	faReparse   = 0x0400
	faEncrypted = 0x4000
)

// Reparse tags shown as symbolic links.
const (
	tagMountPoint = 0xA0000003 // junction
	tagSymlink    = 0xA000000C
	tagLxSymlink  = 0xA000001D // WSL
)

// node is a resolved file: its record and the facts Stat needs.
type node struct {
	file     *mftFile
	dir      bool
	size     int64
	attrs    uint32 // file attributes
	links    int
	created  time.Time
	modified time.Time
	changed  time.Time // MFT record change
	accessed time.Time
	link     string // symbolic link target ("/" separators); "" if not a link
	isLink   bool
	linkErr  error // a reparse point that could not be decoded
}

// FileInfo describes a file; Sys returns the *FileInfo itself, which also
// reports the MFT record number, link count, attributes and other times.
type FileInfo struct {
	name string
	n    *node
}

func (fi *FileInfo) Name() string { return fi.name }

// Size is the length of the unnamed data stream (0 for directories and
// links).
func (fi *FileInfo) Size() int64 { return fi.n.size }

// Mode is 0755 for directories, 0777 for links, 0644 for files, without
// write bits when the read-only attribute is set (as ntfs-3g shows them
// without user mapping).
func (fi *FileInfo) Mode() fs.FileMode {
	switch {
	case fi.n.isLink:
		return fs.ModeSymlink | 0o777
	case fi.n.dir:
		return fs.ModeDir | 0o755
	}
	m := fs.FileMode(0o644)
	if fi.n.attrs&faReadOnly != 0 {
		m &^= 0o222
	}
	return m
}

func (fi *FileInfo) ModTime() time.Time { return fi.n.modified }
func (fi *FileInfo) IsDir() bool        { return fi.n.dir && !fi.n.isLink }
func (fi *FileInfo) Sys() any           { return fi }

// Inode is the MFT record number; names with the same one are hard links.
func (fi *FileInfo) Inode() uint64 { return fi.n.file.num }

// Nlink counts the file's names (8.3 aliases not included).
func (fi *FileInfo) Nlink() uint64 { return uint64(fi.n.links) }

// Attributes are the Windows file attribute bits (FILE_ATTRIBUTE_*).
func (fi *FileInfo) Attributes() uint32 { return fi.n.attrs }

func (fi *FileInfo) CreateTime() time.Time { return fi.n.created }
func (fi *FileInfo) AccessTime() time.Time { return fi.n.accessed }
func (fi *FileInfo) ChangeTime() time.Time { return fi.n.changed }

// Type and Info make *FileInfo an fs.DirEntry too.
func (fi *FileInfo) Type() fs.FileMode          { return fi.Mode().Type() }
func (fi *FileInfo) Info() (fs.FileInfo, error) { return fi, nil }

// node decodes what Stat needs from record num. Callers hold f.mu.
func (f *FS) node(num uint64) (*node, error) {
	file, err := f.file(num)
	if err != nil {
		return nil, err
	}
	n := &node{file: file, dir: file.dir}
	le := binary.LittleEndian
	for _, a := range file.attrs {
		switch {
		case a.typ == atStandardInfo && a.resident && len(a.value) >= 0x24:
			v := a.value
			n.created = ntfsTime(le.Uint64(v[0:]))
			n.modified = ntfsTime(le.Uint64(v[8:]))
			n.changed = ntfsTime(le.Uint64(v[0x10:]))
			n.accessed = ntfsTime(le.Uint64(v[0x18:]))
			n.attrs = le.Uint32(v[0x20:])
		case a.typ == atFileName && a.resident:
			if fn, ok := parseFileName(a.value); ok && fn.namespace != nsDOS {
				n.links++
			}
		case a.typ == atData && a.name == "" && a.lowVCN == 0:
			n.size = a.dataSize
		case a.typ == atReparse:
			n.link, n.isLink, n.linkErr = f.reparseTarget(file, a)
		}
	}
	if !n.isLink && !n.dir && n.attrs&faSystem != 0 && n.size >= 8 && n.size < 4096 {
		n.link, n.isLink = f.interixTarget(file)
	}
	if n.dir || n.isLink {
		n.size = 0
	}
	return n, nil
}

// reparseTarget decodes a symbolic link, junction or WSL link. Other
// reparse points are not links.
func (f *FS) reparseTarget(file *mftFile, a *attr) (string, bool, error) {
	v := a.value
	if !a.resident {
		s, err := f.newStream(file.attrs, atReparse, a.name, file.num)
		if err != nil || s.size > 16<<10 {
			return "", false, nil
		}
		v = make([]byte, s.size)
		if _, err := s.readAt(v, 0); err != nil {
			return "", false, nil
		}
	}
	le := binary.LittleEndian
	if len(v) < 8 {
		return "", false, nil
	}
	tag := le.Uint32(v)
	data := v[8:]
	if n := int(le.Uint16(v[4:])); n < len(data) {
		data = data[:n]
	}
	bad := fmt.Errorf("%w: record %d: reparse point %#x is truncated", ErrCorrupt, file.num, tag)
	switch tag {
	case tagSymlink, tagMountPoint:
		hdr := 8
		if tag == tagSymlink {
			hdr = 12
		}
		if len(data) < hdr {
			return "", true, bad
		}
		subOff, subLen := int(le.Uint16(data[0:])), int(le.Uint16(data[2:]))
		prOff, prLen := int(le.Uint16(data[4:])), int(le.Uint16(data[6:]))
		buf := data[hdr:]
		relative := tag == tagSymlink && le.Uint32(data[8:])&1 != 0
		var t string
		switch {
		case prLen > 0 && prOff+prLen <= len(buf):
			t = utf16String(buf[prOff : prOff+prLen])
		case subOff+subLen <= len(buf):
			t = strings.TrimPrefix(utf16String(buf[subOff:subOff+subLen]), `\??\`)
		default:
			return "", true, bad
		}
		t = strings.ReplaceAll(t, `\`, "/")
		if !relative && len(t) >= 2 && t[1] == ':' {
			return t, true, nil // a Windows absolute path: shown, not followed
		}
		return t, true, nil
	case tagLxSymlink:
		if len(data) < 4 {
			return "", true, bad
		}
		return string(data[4:]), true, nil
	}
	return "", false, nil
}

// interixTarget recognises an Interix/SFU symbolic link: a system file
// whose data is "IntxLNK\x01" and the UTF-16 target (what ntfs-3g writes
// with its "posix" link style and older Services for Unix).
func (f *FS) interixTarget(file *mftFile) (string, bool) {
	s, err := f.newStream(file.attrs, atData, "", file.num)
	if err != nil || s.size > 4096 {
		return "", false
	}
	b := make([]byte, s.size)
	if _, err := s.readAt(b, 0); err != nil && err != io.EOF {
		return "", false
	}
	if len(b) < 8 || string(b[:8]) != "IntxLNK\x01" {
		return "", false
	}
	u := make([]uint16, (len(b)-8)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[8+2*i:])
	}
	return string(utf16.Decode(u)), true
}

// resolver adapts the filesystem to fspath.
type resolver struct{ f *FS }

func (r resolver) IsDir(n *node) bool { return n.dir && !n.isLink }

func (r resolver) Lookup(dir *node, name string) (*node, error) {
	d, err := r.f.readDir(dir.file)
	if err != nil {
		return nil, err
	}
	e, ok := d.lookup(name)
	if !ok {
		return nil, fs.ErrNotExist
	}
	return r.f.entryNode(e)
}

func (r resolver) Link(n *node) (string, bool, error) {
	if !n.isLink {
		return "", false, nil
	}
	if n.linkErr != nil {
		return "", true, n.linkErr
	}
	if len(n.link) >= 2 && n.link[1] == ':' {
		return "", true, fmt.Errorf("%w: the link points outside the volume (%s)", fs.ErrNotExist, n.link)
	}
	return n.link, true, nil
}

// entryNode loads the record a directory entry names, checking that the
// entry is not stale (the record reused since).
func (f *FS) entryNode(e dirent) (*node, error) {
	n, err := f.node(e.rec)
	if err != nil {
		return nil, err
	}
	if e.seq != 0 && n.file.seq != e.seq {
		return nil, fmt.Errorf("%w: %q names record %d of sequence %d, which has %d", ErrCorrupt, e.name, e.rec, e.seq, n.file.seq)
	}
	return n, nil
}

func (f *FS) lookup(op, name string, follow bool) (*node, error) {
	root, err := f.node(recRoot)
	if err != nil {
		return nil, fspath.PathError(op, name, err)
	}
	n, err := fspath.Resolve[*node](resolver{f}, root, name, follow)
	if err != nil {
		return nil, fspath.PathError(op, name, err)
	}
	return n, nil
}

func baseName(name string) string {
	b := path.Base("/" + name)
	if b == "/" {
		return "/"
	}
	return b
}

// Stat describes name, following a symbolic link at its end.
func (f *FS) Stat(name string) (*FileInfo, error) { return f.stat("stat", name, true) }

// Lstat describes name; a symbolic link is described itself.
func (f *FS) Lstat(name string) (*FileInfo, error) { return f.stat("lstat", name, false) }

func (f *FS) stat(op, name string, follow bool) (*FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup(op, name, follow)
	if err != nil {
		return nil, err
	}
	return &FileInfo{name: baseName(name), n: n}, nil
}

// ReadDir lists a directory in index order (NTFS collation: upper-cased
// names); system files are left out of the root.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, fspath.PathError("readdir", name, fspath.ErrNotDir)
	}
	d, err := f.readDir(n.file)
	if err != nil {
		return nil, fspath.PathError("readdir", name, err)
	}
	out := make([]fs.DirEntry, 0, len(d.ents))
	for _, e := range d.ents {
		c, err := f.entryNode(e)
		if err != nil {
			return out, fspath.PathError("readdir", path.Join(name, e.name), err)
		}
		out = append(out, &FileInfo{name: e.name, n: c})
	}
	return out, nil
}

// Readlink returns the target of the symbolic link or junction name, with
// "/" separators.
func (f *FS) Readlink(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup("readlink", name, false)
	if err != nil {
		return "", err
	}
	if !n.isLink {
		return "", fspath.PathError("readlink", name, fs.ErrInvalid)
	}
	if n.linkErr != nil {
		return "", fspath.PathError("readlink", name, n.linkErr)
	}
	return n.link, nil
}

// File is an open file. ReadAt is safe for concurrent use; Read and Seek
// share an offset.
type File struct {
	name   string
	info   *FileInfo
	data   *stream // nil for directories
	off    int64
	closed bool
}

// Open opens name for reading, following a symbolic link at its end.
func (f *FS) Open(name string) (*File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.lookup("open", name, true)
	if err != nil {
		return nil, err
	}
	file := &File{name: name, info: &FileInfo{name: baseName(name), n: n}}
	if !n.dir {
		if n.attrs&faEncrypted != 0 {
			return nil, fspath.PathError("open", name, fmt.Errorf("%w: the file is encrypted (EFS)", ErrUnsupported))
		}
		s, err := f.newStream(n.file.attrs, atData, "", n.file.num)
		if err != nil {
			return nil, fspath.PathError("open", name, err)
		}
		file.data = s
	}
	return file, nil
}

// ReadFile reads a whole file.
func (f *FS) ReadFile(name string) ([]byte, error) {
	file, err := f.Open(name)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b := make([]byte, file.info.Size())
	if _, err := file.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}

// Stat describes the open file.
func (f *File) Stat() (fs.FileInfo, error) { return f.info, nil }

// Close closes the file.
func (f *File) Close() error {
	if f.closed {
		return fspath.PathError("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

// ReadAt reads len(p) bytes from off; it returns io.EOF when fewer remain.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	switch {
	case f.closed:
		return 0, fspath.PathError("read", f.name, fs.ErrClosed)
	case f.data == nil:
		return 0, fspath.PathError("read", f.name, fspath.ErrIsDir)
	case off < 0:
		return 0, fspath.PathError("read", f.name, fs.ErrInvalid)
	}
	n, err := f.data.readAt(p, off)
	if err != nil && err != io.EOF {
		return n, fspath.PathError("read", f.name, err)
	}
	return n, err
}

// Read reads from the current offset.
func (f *File) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.off)
	f.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

// Seek sets the offset for the next Read.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	if f.closed {
		return 0, fspath.PathError("seek", f.name, fs.ErrClosed)
	}
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += f.info.n.size
	default:
		return 0, fspath.PathError("seek", f.name, fs.ErrInvalid)
	}
	if offset < 0 {
		return 0, fspath.PathError("seek", f.name, fs.ErrInvalid)
	}
	f.off = offset
	return offset, nil
}
