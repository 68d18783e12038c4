package fat

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"sort"
	"time"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// AddFile adds the new empty file base to parent.
func (b *backend) AddFile(parent *dirCache, base string, perm iofs.FileMode) (*entry, error) {
	tmpl := &entry{attr: Attr(fatcore.NewFileAttr(perm))}
	tmpl.setCreated(b.now(), b.loc)
	return parent.add(base, tmpl, true, nil)
}

// MakeDir creates directory base in parent. Its cluster (with "." and
// "..") is written and the FAT flushed before the parent's entry appears.
func (b *backend) MakeDir(parent *dirCache, base string, c uint32) error {
	fs := b.fs()
	tmpl := &entry{attr: AttrDir, start: c}
	tmpl.setCreated(fs.now(), fs.loc)

	// Made by MakeRoom, the directory gets its room now, before the
	// barrier this one pays anyway, rather than growing (a barrier each
	// time) as its entries come.
	cs := fs.g.clusterSize
	extra := fs.roomClusters(fs.mkdirSlots, cs/32, cs/32)
	var more []run
	if extra > 0 {
		var err error
		if more, err = fs.allocate(extra, c); err != nil {
			more = nil // room is a hint: the directory grows as it fills
		}
	}
	data := make([]byte, cs)
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
	for _, r := range more {
		if err := fs.writeAt(make([]byte, int(r.Count)*cs), fs.g.clusterOffset(r.First)); err != nil {
			return err
		}
	}
	if len(more) > 0 {
		fs.fat.set(c, more[0].First)
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	// The new directory's clusters (its "." and "..", the rest zeroed)
	// and its chain are on the disk before the entry that makes it a
	// directory: a power cut that kept the entry alone left a directory
	// without "." and ".." (the crash explorer, cmd/cryptvol
	// TestCrashStatesFilesystems).
	if err := fs.barrier(); err != nil {
		return err
	}
	e, err := parent.add(base, tmpl, false, nil)
	if err != nil {
		fs.fat.releaseChain(c)
		return errors.Join(err, fs.flushFAT())
	}
	d := &dirCache{fs: fs, parent: parent, self: e, data: data}
	d.ch.Add(run{First: c, Count: 1})
	for _, r := range more {
		d.ch.Add(r)
		d.data = append(d.data, make([]byte, int(r.Count)*cs)...)
	}
	d.parse()
	fs.dirs[c] = d
	return nil
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
	return fs.nodes.Unlink(e.node, fs.commit, func() error { return e.dir.remove(e) }, func() error {
		if e.isDir() {
			delete(fs.dirs, e.start)
		}
		if e.start != 0 {
			fs.freeChain(e.start)
		}
		return fs.flushFAT()
	})
}

// Unlink is unlink, for the shared Remove and RemoveAll.
func (b *backend) Unlink(e *entry) error { return b.fs().unlink(e) }

// Children returns d's entries in slot order: RemoveAll removes them so.
func (b *backend) Children(d *dirCache) []*entry {
	children := make([]*entry, 0, len(d.live))
	for c := range d.live {
		children = append(children, c)
	}
	sort.Slice(children, func(i, j int) bool { return children[i].slot < children[j].slot })
	return children
}

// HasListing: an entry damaged beyond use is removed without reading what
// it points to.
func (b *backend) HasListing(e *entry) bool { return e.isDir() && e.damageKind != damageData }

// Empty: a directory of garbage is not empty, as far as anyone can tell.
func (b *backend) Empty(d *dirCache) bool { return d.isEmpty() && !d.garbage }

// SetTimes sets what Chtimes sets. FAT keeps only the date of the last
// access.
func (b *backend) SetTimes(e *entry, atime, mtime time.Time) {
	if !atime.IsZero() {
		e.adate, _, _ = encodeTime(atime, b.loc)
	}
	if !mtime.IsZero() {
		e.mdate, e.mtime, _ = encodeTime(mtime, b.loc)
	}
}

func (b *backend) SetCreated(e *entry, ctime time.Time) {
	e.cdate, e.ctime, e.ccenti = encodeTime(ctime, b.loc)
}

func (b *backend) SetAttr(e *entry, a Attr) { e.attr = e.attr&^attrSettable | a&attrSettable }

// attrSettable are the bits SetAttributes changes (not the directory bit).
const attrSettable = AttrReadOnly | AttrHidden | AttrSystem | AttrArchive

// ChangeEntry changes an entry's metadata and writes it (with its open
// file's pending changes, if any).
func (b *backend) ChangeEntry(parent *dirCache, e *entry, change func(*entry)) error {
	change(e)
	if n := e.node; n != nil && n.Dirty() {
		return b.fs().commit(n)
	}
	return e.dir.update(e)
}
