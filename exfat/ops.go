package exfat

import (
	"errors"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fatcore"
	iofs "io/fs"
	"time"
)

// Stat describes the named file or directory.
func (fs *FS) Stat(name string) (*FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.Stat(name, fs.closed, fs.resolve, fs.rootInfo, fs.info)
}

// ReadDir lists a directory, sorted by name. The entries are *FileInfo.
// If the directory holds entries that cannot be understood, the valid ones
// are returned together with an error wrapping ErrCorrupt.
func (fs *FS) ReadDir(name string) ([]iofs.DirEntry, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.ReadDir(name, fs.closed, fs.dirTree(), fs.list)
}

// Mkdir creates a directory: its cluster is zeroed (an exFAT directory has
// no "." or ".." entries) and marked in the bitmap before the parent's
// entry set appears.
func (fs *FS) Mkdir(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("mkdir", name, fs.mkdir(name))
}

func (fs *FS) mkdir(name string) error {
	if err := fs.writable(); err != nil {
		return err
	}
	parent, e, base, err := fs.resolve(name)
	if err != nil {
		return err
	}
	if parent == nil || e != nil {
		return errExist
	}
	units, err := checkName(base)
	if err != nil {
		return err
	}
	if err := parent.corrupt(); err != nil {
		return err
	}
	runs, err := fs.allocate(1, 0)
	if err != nil {
		return err
	}
	c := runs[0].First
	cs := uint64(fs.g.clusterSize)
	tmpl := &entry{attr: AttrDir, start: c, size: cs, valid: cs, flags: flagAllocPossible | flagNoFatChain}
	tmpl.setCreated(fs.now(), fs.loc)
	if err := fs.writeAt(fs.zeroCluster(), fs.g.clusterOffset(c)); err != nil {
		return err
	}
	if err := fs.flushBitmap(); err != nil {
		return err
	}
	// The zeroed cluster is on the disk before the entry that makes it a
	// directory: a power cut that kept the entry but not the zeros left
	// a directory of stale cluster contents that repair cannot mend
	// (issue 31: the crash explorer, cmd/cryptvol TestCrashStatesFilesystems).
	if err := fatcore.SyncDevice(fs.w); err != nil {
		return err
	}
	e, err = parent.add(units, tmpl, false)
	if err != nil {
		fs.bm.setRange(c, 1, false)
		return errors.Join(err, fs.flushBitmap())
	}
	d := &dirCache{fs: fs, parent: parent, self: e, data: make([]byte, cs)}
	d.ch.Add(run{First: c, Count: 1})
	d.parse()
	fs.dirs[c] = d
	return nil
}

// Remove removes a file or an empty directory. The entry set is marked
// unused first (one sector write), then the clusters are freed, so a crash
// in between leaves only clusters in use that no file needs. A file that
// is still open keeps its clusters (and its content readable through the
// open handles) until the last Close.
func (fs *FS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("remove", name, fs.remove(name))
}

func (fs *FS) remove(name string) error {
	parent, e, err := fatcore.Target(name, fs.writable, fs.resolve)
	if err != nil {
		return err
	}
	if parent == nil {
		return fmt.Errorf("%w: cannot remove the root directory", errInvalid)
	}
	if err := parent.corrupt(); err != nil {
		return err
	}
	if e.isDir() {
		d, err := fs.openDir(parent, e)
		if err != nil {
			return err
		}
		if !d.isEmpty() || len(d.bad) > 0 {
			return ErrNotEmpty
		}
	}
	return fs.unlink(e)
}

// unlink erases e from its directory and frees (or, if open, orphans) its
// clusters. A file whose chain is broken is refused rather than freed by
// guesswork: its clusters might belong to another file.
func (fs *FS) unlink(e *entry) error {
	if err := fs.ensureUnshared(); err != nil {
		return err
	}
	var ch chain
	if e.node == nil && e.start != 0 {
		var err error
		cs := int64(fs.g.clusterSize)
		if ch, _, err = fs.loadChain(e.start, (int64(e.size)+cs-1)/cs, e.noFatChain()); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	if n := e.node; n != nil {
		if err := fs.commit(n); err != nil {
			return err
		}
	}
	if err := e.dir.remove(e); err != nil {
		return err
	}
	if n := e.node; n != nil {
		fs.nodes.Orphan(n)
		return nil
	}
	if e.isDir() {
		delete(fs.dirs, e.start)
	}
	fs.freeChain(ch)
	return fs.flushBitmap()
}

// RemoveAll removes name and everything below it. A missing name is not
// an error.
func (fs *FS) RemoveAll(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	// The cross-link guard before any of it is removed.
	return fatcore.RemoveAll(name, fs.writable, fs.resolve, func(parent *dirCache, e *entry) error {
		if err := fs.ensureUnshared(); err != nil {
			return err
		}
		return fs.removeTree(parent, e)
	})
}

func (fs *FS) removeTree(parent *dirCache, e *entry) error {
	if err := parent.corrupt(); err != nil {
		return err
	}
	if e.isDir() {
		d, err := fs.openDir(parent, e)
		if err != nil {
			return err
		}
		for _, c := range d.sortedLive() {
			if err := fs.removeTree(d, c); err != nil {
				return err
			}
		}
		if len(d.bad) > 0 {
			return d.corrupt()
		}
	}
	return fs.unlink(e)
}

// Chtimes sets the access and modification times, like os.Chtimes; a zero
// time leaves that time unchanged. The root directory has no times;
// Chtimes on it does nothing.
func (fs *FS) Chtimes(name string, atime, mtime time.Time) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("chtimes", name, fs.setEntry(name, func(e *entry) {
		if !atime.IsZero() {
			e.atime, _, e.atz = encodeTime(atime, fs.loc)
		}
		if !mtime.IsZero() {
			e.mtime, e.m10, e.mtz = encodeTime(mtime, fs.loc)
		}
	}))
}

// SetCreateTime sets the creation time.
func (fs *FS) SetCreateTime(name string, ctime time.Time) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("chtimes", name, fs.setEntry(name, func(e *entry) {
		e.ctime, e.c10, e.ctz = encodeTime(ctime, fs.loc)
	}))
}

// SetAttributes sets the read-only, hidden, system and archive bits (the
// directory bit cannot be changed).
func (fs *FS) SetAttributes(name string, a Attr) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("chattr", name, fs.setEntry(name, func(e *entry) {
		mask := AttrReadOnly | AttrHidden | AttrSystem | AttrArchive
		e.attr = e.attr&^mask | a&mask
	}))
}

func (fs *FS) setEntry(name string, change func(*entry)) error {
	parent, e, err := fatcore.Target(name, fs.writable, fs.resolve)
	if err != nil || parent == nil { // the root has no times or attributes
		return err
	}
	if err := parent.corrupt(); err != nil {
		return err
	}
	change(e)
	if n := e.node; n != nil && n.Dirty() {
		return fs.commit(n)
	}
	return e.dir.update(e)
}
