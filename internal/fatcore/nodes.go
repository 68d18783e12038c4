package fatcore

import (
	"iter"
	"maps"
)

// Ref is the bookkeeping every open file's node carries in fat and exfat
// alike; each package's node embeds it and Nodes keeps it.
type Ref struct {
	refs    int  // open handles
	dirty   bool // the entry on disk is stale
	removed bool // the entry is gone; the clusters go at the last close
}

func (r *Ref) ref() *Ref { return r }

// Dirty reports whether the node has changes its entry on disk lacks.
func (r *Ref) Dirty() bool { return r.dirty }

// Removed reports whether the node's entry is gone while handles remain.
func (r *Ref) Removed() bool { return r.removed }

// node is a package's *node: comparable, with a Ref embedded.
type node interface {
	comparable
	ref() *Ref
}

// Nodes is a filesystem's set of open files: how many have handles,
// which have changes still to commit, and which were removed while open
// (their clusters stay in use until the last handle closes, and show as
// lost clusters on disk until then, or after a crash).
type Nodes[N node] struct {
	open    int
	dirty   map[N]struct{}
	orphans map[N]struct{}
}

// NewNodes returns an empty set.
func NewNodes[N node]() Nodes[N] {
	return Nodes[N]{dirty: make(map[N]struct{}), orphans: make(map[N]struct{})}
}

// MarkDirty notes that n's entry on disk is stale.
func (s *Nodes[N]) MarkDirty(n N) {
	n.ref().dirty = true
	s.dirty[n] = struct{}{}
}

// Clean notes that n's entry on disk is current (or gone).
func (s *Nodes[N]) Clean(n N) {
	n.ref().dirty = false
	delete(s.dirty, n)
}

// Orphan marks an open node whose entry is gone.
func (s *Nodes[N]) Orphan(n N) {
	n.ref().removed = true
	s.orphans[n] = struct{}{}
}

// Hold adds a reference.
func (s *Nodes[N]) Hold(n N) {
	r := n.ref()
	if r.refs == 0 {
		s.open++
	}
	r.refs++
}

// Drop drops one reference and reports whether it was the last: the
// package then detaches n from its entry and, if n was removed, frees its
// clusters and Forgets it.
func (s *Nodes[N]) Drop(n N) (last bool) {
	r := n.ref()
	r.refs--
	if r.refs > 0 {
		return false
	}
	s.open--
	return true
}

// Forget takes a removed node whose clusters were freed out of the set.
func (s *Nodes[N]) Forget(n N) {
	delete(s.dirty, n)
	delete(s.orphans, n)
}

// Open is the number of files with open handles.
func (s *Nodes[N]) Open() int { return s.open }

// Busy reports whether any file is open or any removed file still holds
// its clusters.
func (s *Nodes[N]) Busy() bool { return s.open > 0 || len(s.orphans) > 0 }

// AnyDirty reports whether some file has changes still to commit.
func (s *Nodes[N]) AnyDirty() bool { return len(s.dirty) > 0 }

// DirtyNodes ranges over the files with changes still to commit; the loop
// may commit (and so Clean) them.
func (s *Nodes[N]) DirtyNodes() iter.Seq[N] { return maps.Keys(s.dirty) }

// Orphans ranges over the removed files still open; the loop may Forget
// them.
func (s *Nodes[N]) Orphans() iter.Seq[N] { return maps.Keys(s.orphans) }

// Unlink is the order of a removal, the same on FAT and exFAT. n is the
// entry's open file (zero when none): it is committed first, so that the
// allocation and the entry agree; then erase takes the entry out of its
// directory; an open file then keeps its clusters (an orphan until its
// last Close), else free gives them back.
func (s *Nodes[N]) Unlink(n N, commit func(N) error, erase, free func() error) error {
	var none N
	if n != none {
		if err := commit(n); err != nil {
			return err
		}
	}
	if err := erase(); err != nil {
		return err
	}
	if n != none {
		s.Orphan(n)
		return nil
	}
	return free()
}

// Committer is how a package writes a node's pending changes, in the
// order both formats keep (see each package's node): Allocation writes
// the allocation tables n's new clusters need, WriteEntry the entry with
// the new first cluster, size and times (one sector write), and Settle
// records what the disk now holds and frees the clusters the entry no
// longer refers to.
type Committer[N any] interface {
	Allocation(n N) error
	WriteEntry(n N) error
	Settle(n N) error
}

// Commit writes n's pending changes through c: nothing for a node
// without any, nothing but the bookkeeping for a removed one (its entry
// is gone).
func (s *Nodes[N]) Commit(n N, c Committer[N]) error {
	r := n.ref()
	if !r.dirty {
		return nil
	}
	if r.removed {
		s.Clean(n)
		return nil
	}
	if err := c.Allocation(n); err != nil {
		return err
	}
	if err := c.WriteEntry(n); err != nil {
		return err
	}
	if err := c.Settle(n); err != nil {
		return err
	}
	s.Clean(n)
	return nil
}

// Release drops one of n's references. After the last, detach unlinks n
// from its entry and, if n was removed, free gives its clusters back.
func (s *Nodes[N]) Release(n N, detach func(N), free func(N) error) error {
	if !s.Drop(n) {
		return nil
	}
	detach(n)
	if !n.ref().removed {
		return nil
	}
	s.Forget(n)
	return free(n)
}
