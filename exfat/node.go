package exfat

import (
	"fmt"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// node is the state shared by all open handles of one file: its clusters
// and what still has to reach the disk.
//
// How a file's changes reach the disk, in order (see doc.go for why):
//   - data is written into clusters as Write is called; new clusters are
//     taken in the in-memory bitmap (and linked in the in-memory FAT when
//     the file is fragmented);
//   - on commit (Sync, Close, or any operation that must see the file as
//     it is on disk): the bitmap, then the FAT entries of the new
//     clusters, then the link from the last cluster the disk knows of to
//     the first new one, then the entry set with the new first cluster,
//     size, flags and times (one sector write), then, if the file was
//     truncated to zero and rewritten, the old clusters are freed.
type node struct {
	ent   *entry
	ch    chain
	links [][2]uint32 // FAT links from clusters the disk knows of, made at commit
	old   chain       // clusters to free once the entry no longer points to them
	// diskClusters is how many clusters of ch the entry on disk covers.
	diskClusters uint32
	fatcore.Ref  // handles, stale entry, removed
}

// openNode returns the shared node of file entry e, loading its chain.
func (fs *FS) openNode(e *entry) (*node, error) {
	if e.node != nil {
		return e.node, nil
	}
	cs := int64(fs.g.clusterSize)
	ch, _, err := fs.loadChain(e.start, (int64(e.size)+cs-1)/cs, e.noFatChain())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.name, err)
	}
	n := &node{ent: e, ch: ch, diskClusters: ch.N}
	e.node = n
	return n, nil
}

// commit writes n's pending changes in the order above.
func (fs *FS) commit(n *node) error { return fs.nodes.Commit(n, fs.files()) }

// Allocation writes the bitmap, then the FAT entries of new clusters,
// then the links from clusters the disk knew of to them.
func (b *backend) Allocation(n *node) error {
	fs := b.fs()
	if err := fs.flushBitmap(); err != nil {
		return err
	}
	if err := fs.flushFAT(); err != nil {
		return err
	}
	if len(n.links) == 0 {
		return nil
	}
	for _, l := range n.links {
		fs.fat.set(l[0], l[1])
	}
	n.links = n.links[:0]
	return fs.flushFAT()
}

// WriteEntry writes the entry set (Settle, after it, records and frees).
func (b *backend) WriteEntry(n *node) error {
	n.ent.start = n.ch.First()
	return n.ent.dir.update(n.ent)
}

func (b *backend) Settle(n *node) error {
	n.diskClusters = n.ch.N
	if n.old.N == 0 {
		return nil
	}
	b.fs().freeChain(n.old)
	n.old = chain{}
	return b.fs().flushBitmap()
}

// Release drops one reference; the last one of a removed file frees its
// clusters.
func (b *backend) Release(n *node) error {
	fs := b.fs()
	return fs.nodes.Release(n, func(n *node) { n.ent.forget(n) }, func(n *node) error {
		fs.freeChain(n.ch)
		fs.freeChain(n.old)
		n.ch, n.old = chain{}, chain{}
		return fs.flushBitmap()
	})
}

// grow makes the chain at least clusters long. A file stays contiguous
// (NoFatChain) while the clusters after it are free; otherwise its
// clusters are linked in the FAT from then on.
func (fs *FS) grow(n *node, clusters uint32) error {
	if n.ch.N >= clusters {
		return nil
	}
	e := n.ent
	last := n.ch.Last()
	near := uint32(0)
	if last != 0 {
		near = last + 1
	}
	runs, err := fs.allocate(clusters-n.ch.N, near)
	if err != nil {
		return err
	}
	if n.ch.N == 0 && len(runs) == 1 {
		e.flags |= flagNoFatChain | flagAllocPossible
		n.ch.Add(runs[0])
		return nil
	}
	if e.noFatChain() && len(runs) == 1 && runs[0].First == near {
		n.ch.Add(runs[0])
		return nil
	}
	if e.noFatChain() && n.ch.N > 0 {
		// Fragmented from now on: the clusters so far get their links
		// (which a NoFatChain entry makes meaningless, so this is safe
		// before the entry changes).
		fs.writeChainFAT(n.ch)
	}
	e.flags = e.flags&^flagNoFatChain | flagAllocPossible
	var add chain
	for _, r := range runs {
		add.Add(r)
	}
	fs.writeChainFAT(add)
	if last != 0 {
		if n.ch.N > n.diskClusters {
			fs.fat.set(last, add.First()) // a cluster the disk does not know of yet
		} else {
			n.links = append(n.links, [2]uint32{last, add.First()})
		}
	}
	for _, r := range runs {
		n.ch.Add(r)
	}
	return nil
}

// writeData writes p at byte offset off of n's chain (long enough already).
func (fs *FS) writeData(n *node, p []byte, off int64) error {
	return fs.writeChain(n.ch, p, off)
}

// zeroFill writes zeros over bytes from..to-1 of n (allocated already).
func (fs *FS) zeroFill(n *node, from, to int64) error {
	z := fs.zeros()
	for from < to {
		k := min(to-from, int64(len(z)))
		if err := fs.writeData(n, z[:k], from); err != nil {
			return err
		}
		from += k
	}
	return nil
}

// maxFileSize is what the cluster heap could hold.
func (fs *FS) maxFileSize() int64 { return int64(fs.g.clusterCount) << fs.g.clusterShift }

func (fs *FS) clustersFor(size int64) uint32 {
	return uint32((size + int64(fs.g.clusterSize) - 1) >> fs.g.clusterShift)
}

// WriteData writes p at off, growing the file as needed. Bytes between
// the valid data length and off are zeroed on disk first (a file written
// by another system may have a valid length below its size).
func (b *backend) WriteData(n *node, p []byte, off int64) error {
	fs := b.fs()
	end := off + int64(len(p))
	if end > fs.maxFileSize() || end < off {
		return fmt.Errorf("%w: writing to %d, the volume holds %d bytes", ErrFileTooLarge, end, fs.maxFileSize())
	}
	e := n.ent
	if err := fs.grow(n, fs.clustersFor(end)); err != nil {
		return err
	}
	if valid := int64(e.valid); off > valid {
		if err := fs.zeroFill(n, valid, off); err != nil {
			return err
		}
	}
	if err := fs.writeData(n, p, off); err != nil {
		return err
	}
	if uint64(end) > e.size {
		e.size = uint64(end)
	}
	if uint64(end) > e.valid {
		e.valid = uint64(end)
	}
	return nil
}

// Touch: the content changed (see entry.touch).
func (b *backend) Touch(n *node) { n.ent.touch(b.now(), b.loc) }

// Truncate's steps (fatcore.Truncate keeps their order).

func (b *backend) CheckSize(n *node, size int64) error {
	if max := b.fs().maxFileSize(); size > max {
		return fmt.Errorf("%w: truncating to %d, the volume holds %d bytes", ErrFileTooLarge, size, max)
	}
	return nil
}

// FreesCommitted: every cluster of a shorter file may be known to the disk.
func (b *backend) FreesCommitted(n *node, size int64) bool {
	return size < int64(n.ent.size) && n.ch.N > 0
}

func (b *backend) Extend(n *node, size int64) error {
	fs, e := b.fs(), n.ent
	if err := fs.grow(n, fs.clustersFor(size)); err != nil {
		return err
	}
	if err := fs.zeroFill(n, int64(e.valid), size); err != nil {
		return err
	}
	e.size, e.valid = uint64(size), uint64(size)
	return nil
}

// Clear keeps the committed clusters until the entry stops pointing at
// them.
func (b *backend) Clear(n *node) {
	fs, e := b.fs(), n.ent
	if n.ch.N > 0 {
		if n.old.N == 0 && n.diskClusters > 0 {
			keep := n.ch.Clone()
			keep.Truncate(n.diskClusters)
			n.old = keep
			rest := n.ch.Clone()
			fs.freeTail(rest, n.diskClusters)
		} else {
			fs.freeTail(n.ch.Clone(), 0) // never referenced from disk
		}
	}
	n.ch, n.links, n.diskClusters = chain{}, nil, 0
	e.start, e.size, e.valid = 0, 0, 0
	e.flags = 0
}

// Shrink: the entry with the smaller size goes to disk first, then the
// clusters are freed, so a crash in between leaves only clusters in use
// that no file needs.
func (b *backend) Shrink(n *node, size int64) error {
	fs, e := b.fs(), n.ent
	e.size = uint64(size)
	e.valid = min(e.valid, e.size)
	e.setModified(fs.now(), fs.loc)
	fs.nodes.MarkDirty(n)
	if err := fs.commit(n); err != nil {
		return err
	}
	keep := fs.clustersFor(size)
	if keep < n.ch.N {
		if !e.noFatChain() {
			last, _ := n.ch.At(keep - 1)
			fs.fat.set(last, eocCluster)
			if err := fs.flushFAT(); err != nil {
				return err
			}
		}
		fs.freeTail(n.ch.Clone(), keep)
		n.ch.Truncate(keep)
		n.diskClusters = min(n.diskClusters, keep)
	}
	return fs.flushBitmap()
}

// freeTail frees the clusters of ch from index keep on.
func (fs *FS) freeTail(ch chain, keep uint32) {
	for _, r := range ch.Runs {
		if r.Pos+r.Count <= keep {
			continue
		}
		skip := uint32(0)
		if r.Pos < keep {
			skip = keep - r.Pos
		}
		fs.bm.setRange(r.First+skip, r.Count-skip, false)
	}
}

// ReadData fills p from n's content at off. Past the valid data length a
// file reads as zeros (section 7.6.5).
func (b *backend) ReadData(n *node, p []byte, off int64) error {
	disk := len(p)
	if valid := int64(n.ent.valid); off+int64(disk) > valid {
		disk = int(max(0, valid-off))
		clear(p[disk:])
	}
	return b.fs().readChain(n.ch, p[:disk], off)
}
