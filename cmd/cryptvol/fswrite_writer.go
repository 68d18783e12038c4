package main

import (
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
func openExt4Tree(a *app, v *volume.Volume, fstype string) (writeTree, func() error, error) {
	w, err := filesystem.OpenExt4Writable(v, v.Size())
	if err != nil {
		v.Close()
		return nil, nil, fsError(err)
	}
	return fsops.New(w, fstype, umask()), closeWriter(w, v), nil
}

// openExFATTree opens v's exFAT filesystem for writing. A filesystem left
// dirty is written all the same (as the kernel does), with a warning.
func openExFATTree(a *app, v *volume.Volume) (writeTree, func() error, error) {
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
		a.warnf("the exFAT filesystem was not closed cleanly (VolumeDirty is set): writing all the same; 'fsck.exfat' (exfatprogs) checks it")
	}
	return fsops.New(w, "exfat", umask()), closeWriter(w, v), nil
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
