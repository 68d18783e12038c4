package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/fsops"
	"github.com/cryptvol/cryptvol/volume"
)

// The in-process writers (ext2/3/4 and exFAT) are written through one
// fsops.Tree over filesystem.Writer: no FUSE, no driver stacked on a raw
// mount, so a kill of the command leaves no mount and no process behind.

// openExt4Tree opens v's ext2/3/4 filesystem with the in-process writer. A
// journal that needs recovery is replayed first (never written around).
func openExt4Tree(a *app, v *volume.Volume, fstype string) (fsops.Target, func() error, error) {
	w, err := filesystem.OpenExt4Writable(v, v.Size())
	if err != nil {
		v.Close()
		return nil, nil, fsError(err)
	}
	return fsops.New(w, fstype, umask()), closeWriter(w, v), nil
}

// openFATTree opens v's FAT filesystem for writing. A volume whose last
// session was interrupted is recovered first (the fat package completes
// or undoes what was left half-way), and what that did is said on
// stderr; one known to have cross-linked files is refused with exit 3
// until 'cryptvol fsck --repair' has repaired it.
func openFATTree(a *app, v *volume.Volume, volArg string) (fsops.Target, func() error, error) {
	fsys, err := filesystem.OpenAs("vfat", v, v.Size(), filesystem.Options{Writable: true})
	if err != nil {
		if errors.Is(err, filesystem.ErrUnknown) || errors.Is(err, filesystem.ErrTooSmall) {
			err = notFATError(v, volArg, true, err)
		} else {
			err = withCode(exitDamaged, err)
		}
		v.Close()
		return nil, nil, err
	}
	w := fsys.(filesystem.Writer)
	done := closeWriter(w, v)
	if err := sayRecovery(a, fsys, volArg); err != nil {
		done()
		return nil, nil, err
	}
	return hinted(fsops.New(w, "vfat", umask()), v), done, nil
}

// sayRecovery says on stderr what the writable open's recovery of an
// interrupted session did, and refuses (exit 3) a filesystem that must be
// repaired before it may change.
func sayRecovery(a *app, fsys filesystem.FS, volArg string) error {
	r, ok := fsys.(filesystem.Recoverer)
	if !ok {
		return nil
	}
	if lines := r.Recovered(); len(lines) > 0 {
		a.warnf("the volume was not closed cleanly (an operation was interrupted); recovered it:")
		for _, l := range lines {
			fmt.Fprintf(a.stderr, "  %s\n", l)
		}
	}
	if err := r.NeedsRepair(); err != nil {
		return withCode(exitDamaged, fmt.Errorf("%v; nothing was changed: run 'cryptvol fsck %s --repair' first", err, volArg))
	}
	return nil
}

// openExFATTree opens v's exFAT filesystem for writing. A filesystem left
// dirty is written all the same (as the kernel does), with a warning.
func openExFATTree(a *app, v *volume.Volume, volArg string) (fsops.Target, func() error, error) {
	fsys, err := filesystem.OpenAs("exfat", v, v.Size(), filesystem.Options{Writable: true})
	if err != nil {
		v.Close()
		return nil, nil, withCode(exitDamaged, err)
	}
	w, ok := fsys.(filesystem.Writer)
	if !ok {
		fsys.Close()
		v.Close()
		return nil, nil, withCode(exitDamaged, filesystem.ErrReadOnly)
	}
	if d, ok := fsys.(filesystem.Dirtier); ok && d.Dirty() {
		// Left dirty with more than an interrupted session leaves.
		a.warnf("the exFAT filesystem was not closed cleanly (VolumeDirty is set) and holds what the recovery does not mend: writing all the same; 'cryptvol fsck %s' tells what", volArg)
	}
	if err := sayRecovery(a, fsys, volArg); err != nil {
		fsys.Close()
		v.Close()
		return nil, nil, err
	}
	return hinted(fsops.New(w, "exfat", umask()), v), closeWriter(w, v), nil
}

// closeWriter closes w, which commits its last change and flushes the
// device, and only then v (which releases its lock).
func closeWriter(w filesystem.Writer, v *volume.Volume) func() error {
	return func() error {
		err := w.Close()
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
}

func isInProcessType(fstype string) bool {
	return strings.HasPrefix(fstype, "ext")
}

// putHintStep is how much file data put writes between two writeback
// hints: small enough that a put of a few megabytes of small files gets
// some, large enough that a call costs nothing beside the data.
const putHintStep = 2 << 20

// hintedTree is the tree of a filesystem whose writer gives the host no
// writeback hints of its own (FAT, exFAT; ext4's writer does, see
// ext4/writeback.go): put hands the container's dirty pages over to the
// host's writeback every putHintStep bytes of file data, so that the disk
// writes while the copy goes on rather than all in put's last flush,
// which waits for them (issue 31, item 4). Nothing of the order of writes
// changes: the flushes still come where they came.
type hintedTree struct {
	*fsops.Tree
	v       *volume.Volume
	pending int64
}

func hinted(t *fsops.Tree, v *volume.Volume) *hintedTree { return &hintedTree{Tree: t, v: v} }

// wroteData counts n bytes of file data written and starts the writeback
// of the data area once putHintStep bytes are pending. Its error is
// dropped: a hint, and a failing device fails the flush after it.
func (t *hintedTree) wroteData(n int64) {
	t.pending += n
	if t.pending >= putHintStep {
		t.pending = 0
		t.v.StartWriteback(0, t.v.Size())
	}
}

// putHint is what put tells of the file data it writes into t: the
// writeback hints of a hintedTree, nothing elsewhere.
func putHint(t fsops.Target) func(int64) {
	if h, ok := t.(*hintedTree); ok {
		return h.wroteData
	}
	return nil
}
