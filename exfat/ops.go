package exfat

import (
	"errors"
	"fmt"
	"github.com/cryptvol/cryptvol/internal/fatcore"
	iofs "io/fs"
	"time"
)

// AddFile adds the new empty file base to parent.
func (b *backend) AddFile(parent *dirCache, base string, perm iofs.FileMode) (*entry, error) {
	tmpl := &entry{attr: Attr(fatcore.NewFileAttr(perm))}
	tmpl.setCreated(b.now(), b.loc)
	return parent.add(nameUnits(base), tmpl, true)
}

// MakeDir creates directory base in parent: its cluster is zeroed (an
// exFAT directory has no "." or ".." entries) and marked in the bitmap
// before the parent's entry set appears.
func (b *backend) MakeDir(parent *dirCache, base string, c uint32) error {
	fs := b.fs()
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
	e, err := parent.add(nameUnits(base), tmpl, false)
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
	return fs.nodes.Unlink(e.node, fs.commit, func() error { return e.dir.remove(e) }, func() error {
		if e.isDir() {
			delete(fs.dirs, e.start)
		}
		fs.freeChain(ch)
		return fs.flushBitmap()
	})
}

// Unlink is unlink, for the shared Remove and RemoveAll.
func (b *backend) Unlink(e *entry) error { return b.fs().unlink(e) }

// Children returns d's entries in slot order: RemoveAll removes them so.
func (b *backend) Children(d *dirCache) []*entry { return d.sortedLive() }

func (b *backend) HasListing(e *entry) bool { return e.isDir() }

// Empty: entries that cannot be understood may be files; the directory
// is not empty then.
func (b *backend) Empty(d *dirCache) bool { return d.isEmpty() && len(d.bad) == 0 }

// SetTimes sets what Chtimes sets, each time with its UTC offset.
func (b *backend) SetTimes(e *entry, atime, mtime time.Time) {
	if !atime.IsZero() {
		e.atime, _, e.atz = encodeTime(atime, b.loc)
	}
	if !mtime.IsZero() {
		e.mtime, e.m10, e.mtz = encodeTime(mtime, b.loc)
	}
}

func (b *backend) SetCreated(e *entry, ctime time.Time) {
	e.ctime, e.c10, e.ctz = encodeTime(ctime, b.loc)
}

// SetAttr sets the bits SetAttributes may change (not the directory bit).
func (b *backend) SetAttr(e *entry, a Attr) {
	mask := AttrReadOnly | AttrHidden | AttrSystem | AttrArchive
	e.attr = e.attr&^mask | a&mask
}

// ChangeEntry changes an entry's metadata, unless its directory cannot be
// changed, and writes its set (with its open file's pending changes).
func (b *backend) ChangeEntry(parent *dirCache, e *entry, change func(*entry)) error {
	if err := parent.corrupt(); err != nil {
		return err
	}
	change(e)
	if n := e.node; n != nil && n.Dirty() {
		return b.fs().commit(n)
	}
	return e.dir.update(e)
}
