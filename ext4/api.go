package ext4

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/cryptvol/cryptvol/internal/fspath"
)

// FileInfo describes a file; Sys returns the *FileInfo itself, which also
// reports the inode number, link count, owner and the other times.
type FileInfo struct {
	name string
	in   *inode
}

func (fi *FileInfo) Name() string       { return fi.name }
func (fi *FileInfo) Size() int64        { return fi.in.size }
func (fi *FileInfo) Mode() fs.FileMode  { return fi.in.fileMode() }
func (fi *FileInfo) ModTime() time.Time { return fi.in.mtime }
func (fi *FileInfo) IsDir() bool        { return fi.in.isDir() }
func (fi *FileInfo) Sys() any           { return fi }

// Inode is the inode number; names with the same one are hard links.
func (fi *FileInfo) Inode() uint64 { return uint64(fi.in.ino) }

// Nlink is the number of names the inode has.
func (fi *FileInfo) Nlink() uint64 { return uint64(fi.in.links) }

// Uid and Gid are the owner's numeric ids.
func (fi *FileInfo) Uid() uint32 { return fi.in.uid }
func (fi *FileInfo) Gid() uint32 { return fi.in.gid }

// AccessTime, ChangeTime (inode change) and BirthTime (zero when the inode
// has no room for it: 128-byte inodes).
func (fi *FileInfo) AccessTime() time.Time { return fi.in.atime }
func (fi *FileInfo) ChangeTime() time.Time { return fi.in.ctime }
func (fi *FileInfo) BirthTime() time.Time  { return fi.in.crtime }

// Type and Info make *FileInfo an fs.DirEntry too.
func (fi *FileInfo) Type() fs.FileMode          { return fi.Mode().Type() }
func (fi *FileInfo) Info() (fs.FileInfo, error) { return fi, nil }

// resolver adapts the filesystem to fspath. Its nodes are inodes.
type resolver struct{ f *FS }

func (r resolver) IsDir(in *inode) bool { return in.isDir() }

func (r resolver) Lookup(dir *inode, name string) (*inode, error) {
	d, err := r.f.readDir(dir)
	if err != nil {
		return nil, err
	}
	i, ok := d.byName[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return r.f.readInode(d.ents[i].ino)
}

func (r resolver) Link(in *inode) (string, bool, error) {
	if !in.isSymlink() {
		return "", false, nil
	}
	t, err := r.f.readlink(in)
	return t, true, err
}

// lookup resolves name to its inode. Callers hold f.mu.
func (f *FS) lookup(op, name string, follow bool) (*inode, error) {
	root, err := f.readInode(rootIno)
	if err != nil {
		return nil, fspath.PathError(op, name, err)
	}
	in, err := fspath.Resolve[*inode](resolver{f}, root, name, follow)
	if err != nil {
		return nil, fspath.PathError(op, name, err)
	}
	return in, nil
}

func baseName(name string) string {
	b := path.Base("/" + name)
	if b == "/" {
		return "/"
	}
	return b
}

// Stat describes the file name, following a symbolic link at its end.
func (f *FS) Stat(name string) (*FileInfo, error) { return f.stat("stat", name, true) }

// Lstat describes the file name; a symbolic link is described itself.
func (f *FS) Lstat(name string) (*FileInfo, error) { return f.stat("lstat", name, false) }

func (f *FS) stat(op, name string, follow bool) (*FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.lookup(op, name, follow)
	if err != nil {
		return nil, err
	}
	return &FileInfo{name: baseName(name), in: in}, nil
}

// ReadDir lists a directory, sorted as stored (hash order for indexed
// directories); "." and ".." are left out. Entries are *FileInfo values,
// so Info costs nothing more.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.lookup("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if !in.isDir() {
		return nil, fspath.PathError("readdir", name, fspath.ErrNotDir)
	}
	d, err := f.readDir(in)
	if err != nil {
		return nil, fspath.PathError("readdir", name, err)
	}
	out := make([]fs.DirEntry, 0, len(d.ents))
	for _, e := range d.ents {
		if e.ino == 0 {
			continue // removed by the writer since the directory was read
		}
		child, err := f.readInode(e.ino)
		if err != nil {
			return out, fspath.PathError("readdir", path.Join(name, e.name), err)
		}
		out = append(out, &FileInfo{name: e.name, in: child})
	}
	return out, nil
}

// Readlink returns the target of the symbolic link name.
func (f *FS) Readlink(name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.lookup("readlink", name, false)
	if err != nil {
		return "", err
	}
	if !in.isSymlink() {
		return "", fspath.PathError("readlink", name, fs.ErrInvalid)
	}
	t, err := f.readlink(in)
	if err != nil {
		return "", fspath.PathError("readlink", name, err)
	}
	return t, nil
}

// readlink reads a symbolic link's target: in i_block for a fast link,
// in its data otherwise. Callers hold f.mu.
func (f *FS) readlink(in *inode) (string, error) {
	if in.size > 65536 {
		return "", fmt.Errorf("%w: symbolic link inode %d of %d bytes", ErrCorrupt, in.ino, in.size)
	}
	if in.flags&flagEncrypt != 0 {
		return "", fmt.Errorf("%w: symbolic link inode %d is encrypted (fscrypt)", ErrUnsupported, in.ino)
	}
	if in.flags&(flagExtents|flagInlineData) == 0 && in.size < 60 {
		eaBlocks := uint64(0)
		if in.fileACL != 0 {
			eaBlocks = uint64(f.blockSize / 512)
		}
		if in.blocks512 <= eaBlocks {
			return string(in.block[:in.size]), nil
		}
	}
	b := make([]byte, in.size)
	if err := f.readData(in, nil, b, 0); err != nil {
		return "", err
	}
	return string(b), nil
}

// Open opens the file name for reading, following a symbolic link at its
// end. Directories can be opened too (for Stat); reading them fails.
func (f *FS) Open(name string) (*File, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, err := f.lookup("open", name, true)
	if err != nil {
		return nil, err
	}
	file := &File{fs: f, name: name, info: &FileInfo{name: baseName(name), in: in}}
	if in.mode&sIFMT == sIFREG {
		if in.flags&flagEncrypt != 0 {
			return nil, fspath.PathError("open", name, fmt.Errorf("%w: the file is encrypted (fscrypt)", ErrUnsupported))
		}
		if in.flags&flagInlineData != 0 {
			if file.inline, err = in.inlineContent(); err != nil {
				return nil, fspath.PathError("open", name, err)
			}
		} else if file.runs, err = f.blockMap(in); err != nil {
			return nil, fspath.PathError("open", name, err)
		}
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
