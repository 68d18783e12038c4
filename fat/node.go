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
func (fs *FS) commit(n *node) error { return fs.nodes.Commit(n, fs.files()) }

// Allocation, WriteEntry and Settle are commit's steps.
func (b *backend) Allocation(*node) error { return b.fs().flushFAT() }

func (b *backend) WriteEntry(n *node) error {
	n.ent.start = n.ch.First()
	return n.ent.dir.update(n.ent)
}

func (b *backend) Settle(n *node) error {
	n.diskStart = n.ent.start
	if n.oldStart == 0 {
		return nil
	}
	b.fs().freeChain(n.oldStart)
	n.oldStart = 0
	return b.fs().flushFAT()
}

// Release drops one reference; the last one of a removed file frees its
// clusters.
func (b *backend) Release(n *node) error {
	fs := b.fs()
	return fs.nodes.Release(n, func(n *node) { n.ent.forget(n) }, func(n *node) error {
		if c := n.ch.First(); c != 0 {
			fs.freeChain(c)
		}
		if n.oldStart != 0 {
			fs.freeChain(n.oldStart)
			n.oldStart = 0
		}
		return fs.flushFAT()
	})
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

// ReadData reads len(p) bytes at offset off of n's chain.
func (b *backend) ReadData(n *node, p []byte, off int64) error {
	g := b.g
	return n.ch.Pieces(p, off, int64(g.clusterSize), g.clusterOffset, b.fs().readAt)
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

// WriteData writes p at off, growing the file as needed.
func (b *backend) WriteData(n *node, p []byte, off int64) error {
	fs := b.fs()
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
	return nil
}

// Touch: the content changed (see entry.touch).
func (b *backend) Touch(n *node) { n.ent.touch(b.now(), b.loc) }

// Truncate's steps (fatcore.Truncate keeps their order).

func (b *backend) CheckSize(n *node, size int64) error {
	if size > maxFileSize {
		return fmt.Errorf("%w: truncating to %d", ErrFileTooLarge, size)
	}
	return nil
}

func (b *backend) FreesCommitted(n *node, size int64) bool {
	return size < int64(n.ent.size) || size == 0 && n.diskStart != 0
}

func (b *backend) Extend(n *node, size int64) error {
	fs := b.fs()
	cs := int64(fs.g.clusterSize)
	if err := fs.grow(n, uint32((size+cs-1)/cs)); err != nil {
		return err
	}
	if err := fs.zeroFill(n, int64(n.ent.size), size); err != nil {
		return err
	}
	n.ent.size = uint32(size)
	return nil
}

// Clear keeps the committed chain until the entry stops pointing to it.
func (b *backend) Clear(n *node) {
	if c := n.ch.First(); c != 0 {
		if c == n.diskStart && n.oldStart == 0 {
			n.oldStart = c
		} else if c != n.diskStart {
			b.fat.releaseChain(c) // never referenced from disk
		}
	}
	n.ch = chain{}
	n.ent.start = 0
	n.ent.size = 0
}

// Shrink: the entry with the smaller size goes to disk first, then the
// chain is cut, so a crash in between leaves a chain that is merely
// longer than its file.
func (b *backend) Shrink(n *node, size int64) error {
	fs := b.fs()
	n.ent.size = uint32(size)
	n.ent.setModified(fs.now(), fs.loc)
	fs.nodes.MarkDirty(n)
	if err := fs.commit(n); err != nil {
		return err
	}
	cs := int64(fs.g.clusterSize)
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
