package fat

import (
	"errors"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fatcore"
	iofs "io/fs"
	"sort"
	"time"
)

// Stat describes the named file or directory.
func (fs *FS) Stat(name string) (*FileInfo, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.Stat(name, fs.closed, fs.resolve, fs.rootInfo, fs.info)
}

// ReadDir lists a directory, sorted by name. The entries are *FileInfo.
// If the directory holds invalid entries (a cluster of garbage, say), the
// valid ones are returned together with an error wrapping ErrCorrupt.
func (fs *FS) ReadDir(name string) ([]iofs.DirEntry, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.ReadDir(name, fs.closed, fs.dirTree(), fs.list)
}

// Mkdir creates a directory. Its cluster (with "." and "..") is written
// and the FAT flushed before the parent's entry appears.
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
	if err := checkName(base); err != nil {
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
	tmpl := &entry{attr: AttrDir, start: c}
	tmpl.setCreated(fs.now(), fs.loc)

	data := make([]byte, fs.g.clusterSize)
	dot := *tmpl
	copy(dot.short[:], ".          ")
	dot.encodeShort(data[0:32])
	dotdot := *tmpl
	copy(dotdot.short[:], "..         ")
	dotdot.start = parent.firstCluster()
	if parent.parent == nil {
		dotdot.start = 0 // ".." of a top-level directory is 0, even on FAT32
	}
	dotdot.encodeShort(data[32:64])
	if err := fs.writeAt(data, fs.g.clusterOffset(c)); err != nil {
		return err
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	// The new directory's cluster (its "." and "..") and its chain are on
	// the disk before the entry that makes it a directory: a power cut
	// that kept the entry alone left a directory without "." and ".."
	// (the crash explorer, cmd/cryptvol TestCrashStatesFilesystems).
	if err := fs.barrier(); err != nil {
		return err
	}
	e, err = parent.add(base, tmpl, false, nil)
	if err != nil {
		fs.fat.releaseChain(c)
		return errors.Join(err, fs.flushFAT())
	}
	d := &dirCache{fs: fs, parent: parent, self: e, data: data}
	d.ch.Add(run{First: c, Count: 1})
	d.parse()
	fs.dirs[c] = d
	return nil
}

// Remove removes a file or an empty directory. The directory entry is
// erased first, then the clusters are freed, so a crash in between leaves
// only lost clusters. A file that is still open keeps its clusters (and
// its content readable through the open handles) until the last Close.
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
	if e.isDir() && e.damageKind != damageData {
		d, err := fs.openDir(parent, e)
		if err != nil {
			return err
		}
		if !d.isEmpty() || d.garbage {
			return ErrNotEmpty
		}
	}
	if err := fs.ensureUnshared(); err != nil {
		return err
	}
	return fs.unlink(e)
}

// unlink erases e from its directory and frees (or orphans, if open) its
// clusters. A file whose chain is broken is refused rather than freed by
// guesswork: its clusters might belong to another file. An entry damaged
// beyond use (a size without a cluster, a cluster outside the volume) is
// erased and frees nothing.
func (fs *FS) unlink(e *entry) error {
	if e.damageKind == damageData {
		return e.dir.remove(e)
	}
	if e.node == nil && e.start != 0 {
		if _, err := fs.fat.loadChain(e.start); err != nil {
			return fmt.Errorf("%s: %w", e.name, err)
		}
	}
	if n := e.node; n != nil {
		// Commit first so the FAT and entry agree; the entry then goes and
		// the clusters stay with the open handles.
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
	if e.start != 0 {
		fs.freeChain(e.start)
	}
	return fs.flushFAT()
}

// RemoveAll removes name and everything below it. A missing name is not
// an error.
func (fs *FS) RemoveAll(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fatcore.RemoveAll(name, fs.writable, fs.resolve, fs.removeTree)
}

func (fs *FS) removeTree(parent *dirCache, e *entry) error {
	if err := parent.corrupt(); err != nil {
		return err
	}
	if err := fs.ensureUnshared(); err != nil {
		return err
	}
	if e.isDir() && e.damageKind != damageData {
		d, err := fs.openDir(parent, e)
		if err != nil {
			return err
		}
		children := make([]*entry, 0, len(d.live))
		for c := range d.live {
			children = append(children, c)
		}
		sort.Slice(children, func(i, j int) bool { return children[i].slot < children[j].slot })
		for _, c := range children {
			if err := fs.removeTree(d, c); err != nil {
				return err
			}
		}
		if err := d.corrupt(); err != nil {
			return err
		}
	}
	return fs.unlink(e)
}

// Chtimes sets the access and modification times, like os.Chtimes; a zero
// time leaves that time unchanged. FAT keeps only the date of the last
// access. The root directory has no times; Chtimes on it does nothing.
func (fs *FS) Chtimes(name string, atime, mtime time.Time) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("chtimes", name, fs.setEntry(name, func(e *entry) {
		if !atime.IsZero() {
			e.adate, _, _ = encodeTime(atime, fs.loc)
		}
		if !mtime.IsZero() {
			e.mdate, e.mtime, _ = encodeTime(mtime, fs.loc)
		}
	}))
}

// SetCreateTime sets the creation time.
func (fs *FS) SetCreateTime(name string, ctime time.Time) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return pathErr("chtimes", name, fs.setEntry(name, func(e *entry) {
		e.cdate, e.ctime, e.ccenti = encodeTime(ctime, fs.loc)
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

// setEntry changes an entry's metadata and writes it.
func (fs *FS) setEntry(name string, change func(*entry)) error {
	parent, e, err := fatcore.Target(name, fs.writable, fs.resolve)
	if err != nil || parent == nil { // the root has no times or attributes
		return err
	}
	change(e)
	if n := e.node; n != nil && n.Dirty() {
		return fs.commit(n)
	}
	return e.dir.update(e)
}
