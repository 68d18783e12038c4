package fat

import (
	"fmt"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// node is the state shared by all open handles of one file: its cluster
// chain and what still has to reach the disk.
//
// How a file's changes reach the disk, in order (see doc.go for why):
//   - data is written into clusters as Write is called;
//   - on commit (Sync, Close, or any operation that must see the file as
//     it is on disk): first the FAT, so every new cluster and link is
//     durable; then the directory entry with the new first cluster, size
//     and time, in one sector write; then, if the file was truncated to
//     zero and rewritten, the old chain is freed.
type node struct {
	ent         *entry
	ch          chain
	diskStart   uint32 // first cluster as the directory entry on disk has it
	oldStart    uint32 // chain to free once the entry no longer points to it
	fatcore.Ref        // handles, stale entry, removed
}

// openNode returns the shared node of file entry e, loading and checking
// its chain.
func (fs *FS) openNode(e *entry) (*node, error) {
	if e.node != nil {
		return e.node, nil
	}
	if e.damageKind == damageData {
		return nil, corruptf("%s: %s", e.name, e.damage)
	}
	ch, err := fs.fat.loadChain(e.start)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.name, err)
	}
	cs := int64(fs.g.clusterSize)
	if need := (int64(e.size) + cs - 1) / cs; int64(ch.N) < need {
		return nil, corruptf("%s: size %d bytes needs %d clusters but its chain has %d", e.name, e.size, need, ch.N)
	}
	n := &node{ent: e, ch: ch, diskStart: e.start}
	e.node = n
	return n, nil
}

// commit writes n's pending changes: FAT first, then the directory entry,
// then frees a chain the entry no longer refers to.
func (fs *FS) commit(n *node) error {
	if !n.Dirty() {
		return nil
	}
	if n.Removed() {
		fs.nodes.Clean(n)
		return nil
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	e := n.ent
	e.start = n.ch.First()
	if err := e.dir.update(e); err != nil {
		return err
	}
	n.diskStart = e.start
	if n.oldStart != 0 {
		fs.freeChain(n.oldStart)
		n.oldStart = 0
		if err := fs.flushFAT(); err != nil {
			return err
		}
	}
	fs.nodes.Clean(n)
	return nil
}

// release drops one reference; the last one of a removed file frees its
// clusters.
func (fs *FS) release(n *node) error {
	if !fs.nodes.Drop(n) {
		return nil
	}
	if n.ent != nil && n.ent.node == n {
		n.ent.node = nil
	}
	if !n.Removed() {
		return nil
	}
	if c := n.ch.First(); c != 0 {
		fs.freeChain(c)
	}
	if n.oldStart != 0 {
		fs.freeChain(n.oldStart)
		n.oldStart = 0
	}
	fs.nodes.Forget(n)
	return fs.flushFAT()
}

// grow makes the chain at least clusters long, allocating near its end.
func (fs *FS) grow(n *node, clusters uint32) error {
	if n.ch.N >= clusters {
		return nil
	}
	runs, err := fs.allocate(clusters-n.ch.N, n.ch.Last())
	if err != nil {
		return err
	}
	if last := n.ch.Last(); last != 0 {
		fs.fat.set(last, runs[0].First)
	}
	for _, r := range runs {
		n.ch.Add(r)
	}
	n.ent.start = n.ch.First()
	return nil
}

// writeData writes p at byte offset off of n's chain, which must already
// be long enough.
func (fs *FS) writeData(n *node, p []byte, off int64) error {
	return n.ch.Pieces(p, off, int64(fs.g.clusterSize), fs.g.clusterOffset, fs.writeAt)
}

// readData reads len(p) bytes at offset off of n's chain.
func (fs *FS) readData(n *node, p []byte, off int64) error {
	return n.ch.Pieces(p, off, int64(fs.g.clusterSize), fs.g.clusterOffset, fs.readAt)
}

// zeroFill writes zeros over bytes from..to-1 of n (allocated already).
func (fs *FS) zeroFill(n *node, from, to int64) error {
	z := fs.zeroCluster()
	for from < to {
		k := to - from
		if k > int64(len(z)) {
			k = int64(len(z))
		}
		if err := fs.writeData(n, z[:k], from); err != nil {
			return err
		}
		from += k
	}
	return nil
}

// maxFileSize is the largest size a directory entry can hold.
const maxFileSize = 0xFFFFFFFF

// writeAtNode writes p at off, growing the file as needed.
func (fs *FS) writeAtNode(n *node, p []byte, off int64) error {
	end := off + int64(len(p))
	if end > maxFileSize {
		return fmt.Errorf("%w: writing to %d", ErrFileTooLarge, end)
	}
	size := int64(n.ent.size)
	cs := int64(fs.g.clusterSize)
	if err := fs.grow(n, uint32((end+cs-1)/cs)); err != nil {
		return err
	}
	if off > size {
		if err := fs.zeroFill(n, size, off); err != nil {
			return err
		}
	}
	if err := fs.writeData(n, p, off); err != nil {
		return err
	}
	if end > size {
		n.ent.size = uint32(end)
	}
	n.ent.setModified(fs.now(), fs.loc)
	n.ent.attr |= AttrArchive
	fs.nodes.MarkDirty(n)
	return nil
}

// truncate sets n's size.
func (fs *FS) truncate(n *node, size int64) error {
	if size < 0 {
		return errInvalid
	}
	if size > maxFileSize {
		return fmt.Errorf("%w: truncating to %d", ErrFileTooLarge, size)
	}
	old := int64(n.ent.size)
	cs := int64(fs.g.clusterSize)
	if size < old || size == 0 && n.diskStart != 0 {
		// Clusters the directory entry refers to will be freed.
		if err := fs.ensureUnshared(); err != nil {
			return err
		}
	}
	switch {
	case size == old:
		return nil
	case size > old:
		if err := fs.grow(n, uint32((size+cs-1)/cs)); err != nil {
			return err
		}
		if err := fs.zeroFill(n, old, size); err != nil {
			return err
		}
		n.ent.size = uint32(size)
	case size == 0:
		// Keep the committed chain until the entry stops pointing to it:
		// a crash before the next commit leaves the old content intact.
		if c := n.ch.First(); c != 0 {
			if c == n.diskStart && n.oldStart == 0 {
				n.oldStart = c
			} else if c != n.diskStart {
				fs.fat.releaseChain(c) // never referenced from disk
			}
		}
		n.ch = chain{}
		n.ent.start = 0
		n.ent.size = 0
	default:
		// Shrink: the entry with the smaller size goes to disk first, then
		// the chain is cut, so a crash in between leaves a chain that is
		// merely longer than its file.
		n.ent.size = uint32(size)
		n.ent.setModified(fs.now(), fs.loc)
		fs.nodes.MarkDirty(n)
		if err := fs.commit(n); err != nil {
			return err
		}
		keep := uint32((size + cs - 1) / cs)
		if keep < n.ch.N {
			last, _ := n.ch.At(keep - 1)
			next := fs.fat.get(last)
			fs.fat.set(last, fs.fat.eocMark())
			if fs.fat.valid(next) {
				fs.freeChain(next)
			}
			n.ch.Truncate(keep)
		}
		return fs.flushFAT()
	}
	n.ent.setModified(fs.now(), fs.loc)
	n.ent.attr |= AttrArchive
	fs.nodes.MarkDirty(n)
	return nil
}
