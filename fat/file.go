package fat

import (
	iofs "io/fs"
	"os"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// File is an open file or directory. Its methods are safe for concurrent
// use. Reads and writes go straight to the device (no data cache); size,
// first cluster and modification time reach the directory entry on Sync,
// Close, or FS.Sync. Its methods (Read ReadAt Write WriteAt Seek Truncate
// Sync Close Stat ReadDir Name) are the handle fat and exfat share.
type File = fatcore.File[*node, *dirCache]

// Open opens a file or directory for reading.
func (fs *FS) Open(name string) (*File, error) {
	return fs.OpenFile(name, os.O_RDONLY, 0)
}

// Create creates or truncates a file and opens it read-write.
func (fs *FS) Create(name string) (*File, error) {
	return fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens a file with the os package's flags (O_RDONLY, O_WRONLY,
// O_RDWR, O_APPEND, O_CREATE, O_EXCL, O_TRUNC). A new file whose perm has
// no write bit gets the read-only attribute. Directories open only with
// O_RDONLY.
func (fs *FS) OpenFile(name string, flag int, perm iofs.FileMode) (*File, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f, err := fs.openFile(name, flag, perm)
	if err != nil {
		return nil, pathErr("open", name, err)
	}
	return f, nil
}

const accessMode = fatcore.AccessMode

func (fs *FS) openFile(name string, flag int, perm iofs.FileMode) (*File, error) {
	if fs.closed {
		return nil, errClosed
	}
	writing := flag&accessMode != os.O_RDONLY || flag&(os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	if writing {
		if err := fs.writable(); err != nil {
			return nil, err
		}
	}
	parent, e, base, err := fs.resolve(name)
	if err != nil {
		return nil, err
	}
	if parent == nil { // the root
		if writing {
			return nil, ErrIsDir
		}
		return fatcore.NewDir(fs.files(), fs.root, name, flag), nil
	}
	if e == nil {
		if flag&os.O_CREATE == 0 {
			return nil, errNotExist
		}
		if err := checkName(base); err != nil {
			return nil, err
		}
		if err := parent.corrupt(); err != nil {
			return nil, err
		}
		tmpl := &entry{attr: AttrArchive}
		if perm&0o222 == 0 {
			tmpl.attr |= AttrReadOnly
		}
		tmpl.setCreated(fs.now(), fs.loc)
		e, err = parent.add(base, tmpl, true, nil)
		if err != nil {
			return nil, err
		}
		n := &node{ent: e}
		e.node = n
		fs.markDirty(n)
		fs.hold(n)
		return fatcore.NewFile(fs.files(), n, name, flag), nil
	}
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		return nil, errExist
	}
	if e.isDir() {
		if writing {
			return nil, ErrIsDir
		}
		d, err := fs.openDir(parent, e)
		if err != nil {
			return nil, err
		}
		return fatcore.NewDir(fs.files(), d, name, flag), nil
	}
	if writing && e.attr&AttrReadOnly != 0 && flag&accessMode != os.O_RDONLY {
		return nil, iofs.ErrPermission
	}
	n, err := fs.openNode(e)
	if err != nil {
		return nil, err
	}
	if flag&os.O_TRUNC != 0 && flag&accessMode != os.O_RDONLY && e.start != 0 {
		// The old content is freed once the new one is committed.
		if err := fs.ensureUnshared(); err != nil {
			return nil, err
		}
	}
	fs.hold(n)
	f := fatcore.NewFile(fs.files(), n, name, flag)
	if flag&os.O_TRUNC != 0 && flag&accessMode != os.O_RDONLY {
		if err := fs.truncate(n, 0); err != nil {
			fs.release(n)
			return nil, err
		}
	}
	return f, nil
}

// list returns a directory's entries sorted by name, and an ErrCorrupt
// error naming any invalid entries (which are left out).
func (fs *FS) list(d *dirCache) ([]iofs.DirEntry, error) {
	return fatcore.Listing(d.live, fs.info), d.corrupt()
}
