package fatcore

import iofs "io/fs"

// Resizer is what a file's truncate asks of its filesystem (a part of
// Backend): the steps whose order Truncate keeps, each the package's own.
type Resizer[N node] interface {
	Size(n N) int64
	// Nodes is the filesystem's set of open files.
	Nodes() *Nodes[N]
	// CheckSize refuses a size the format cannot record.
	CheckSize(n N, size int64) error
	// FreesCommitted reports whether truncating n to size frees clusters
	// its entry on disk refers to.
	FreesCommitted(n N, size int64) bool
	// EnsureUnshared is the cross-link guard run before such clusters are
	// freed (see each package's ensureUnshared).
	EnsureUnshared() error
	// Extend grows n to size, the new bytes zero.
	Extend(n N, size int64) error
	// Clear truncates n to nothing, keeping the clusters its entry on
	// disk refers to until the entry stops pointing at them: a crash
	// before the next commit leaves the old content whole.
	Clear(n N)
	// Shrink writes n's entry with the smaller size, then frees the
	// clusters past it, so a crash in between leaves only clusters no
	// file needs.
	Shrink(n N, size int64) error
	// Touch sets n's modification time to now and its archive bit (see
	// the function Touch).
	Touch(n N)
}

// Truncate changes n's size in the order FAT and exFAT share: a size out
// of range is refused, the cross-link guard runs before committed
// clusters are freed, and every change but a shrink (which commits
// itself) leaves n modified and to be committed.
func Truncate[N node](r Resizer[N], n N, size int64) error {
	if size < 0 {
		return iofs.ErrInvalid
	}
	if err := r.CheckSize(n, size); err != nil {
		return err
	}
	old := r.Size(n)
	if r.FreesCommitted(n, size) {
		if err := r.EnsureUnshared(); err != nil {
			return err
		}
	}
	switch {
	case size == old:
		return nil
	case size > old:
		if err := r.Extend(n, size); err != nil {
			return err
		}
	case size == 0:
		r.Clear(n)
	default:
		return r.Shrink(n, size)
	}
	Touch(r, n)
	return nil
}

// Touch records a change to n's content (a write, a truncate): its time
// and archive bit, and that its entry on disk is now stale.
func Touch[N node](r Resizer[N], n N) {
	r.Touch(n)
	r.Nodes().MarkDirty(n)
}
