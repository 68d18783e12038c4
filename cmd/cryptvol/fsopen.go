package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

// openFS unlocks the volume read-only and opens the filesystem inside it,
// whichever it is (FAT, ext2/3/4, NTFS). Closing the returned func closes
// the filesystem and the volume.
func openFS(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string) (filesystem.FS, func() error, error) {
	v, err := openVolume(ctx, a, fs, cf, path, true)
	if err != nil {
		return nil, nil, err
	}
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{})
	if err != nil {
		v.Close()
		if errors.Is(err, filesystem.ErrUnknown) {
			return nil, nil, withCode(exitDamaged, fmt.Errorf("the volume holds no filesystem cryptvol recognises (FAT, exFAT, ext2/3/4, NTFS); to create a FAT one (erasing the volume's content): 'cryptvol format %s --filesystem fat'", path))
		}
		return nil, nil, withCode(exitDamaged, err)
	}
	closer := func() error {
		err := fsys.Close()
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if ffs := filesystem.FAT(fsys); ffs != nil && ffs.Dirty() {
		warnDirtyFAT(a, path)
	}
	return fsys, closer, nil
}

// warnDirtyFAT tells a reader that the FAT volume's last session was
// interrupted, and what will complete it.
func warnDirtyFAT(a *app, path string) {
	a.warnf("the volume was not closed cleanly (an operation was interrupted): it is shown as it is; the next command that writes into it, or 'cryptvol fsck %s --repair', completes or undoes what was left half-way", path)
}

// fsError maps filesystem errors onto the CLI's exit codes.
func fsError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, filesystem.ErrCorrupt), errors.Is(err, filesystem.ErrUnsupported):
		return withCode(exitDamaged, err)
	}
	return fatError(err)
}

// notFATError explains why a FAT-only command cannot work on the volume:
// another filesystem that fsprobe recognises is there (which formatting
// would destroy, so it is not suggested), or none at all.
func notFATError(v *volume.Volume, path string, write bool, err error) error {
	if r, perr := fsprobe.Probe(v); perr == nil && r.Type != "vfat" {
		if write {
			return withCode(exitDamaged, fmt.Errorf("writing %s is not supported — read-only here (ls, get, df, info work)", r.Type))
		}
		return withCode(exitDamaged, fmt.Errorf("%s is not FAT (ls, get, df, info and fsck work on it)", r.Type))
	}
	return withCode(exitDamaged, fmt.Errorf("the volume holds no FAT filesystem (%v); create one with 'cryptvol format %s --filesystem fat'", err, path))
}

// fatMode says how openFAT opens the filesystem.
type fatMode int

const (
	fatRead   fatMode = iota // read-only: ls, get, df, fsck
	fatWrite                 // put, rm, mv, mkdir: recovers an interrupted session first
	fatRepair                // fsck --repair: as found, for Check(true) to report and repair
)

// openFAT unlocks the volume and opens the FAT filesystem inside it.
// Closing the returned func flushes the filesystem and closes the volume.
//
// Opened for writing, a volume whose last session was interrupted is
// recovered first (the fat package completes or undoes what was left
// half-way), and what that did is said on stderr. A volume known to have
// cross-linked files is refused for writing with exit 3 until
// 'cryptvol fsck --repair' has repaired it.
func openFAT(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string, mode fatMode) (*fat.FS, func() error, error) {
	v, err := openVolume(ctx, a, fs, cf, path, mode == fatRead)
	if err != nil {
		return nil, nil, err
	}
	return openFATOn(a, v, path, mode)
}

// openFATOn is openFAT on a volume already open (and closes it on error).
func openFATOn(a *app, v *volume.Volume, path string, mode fatMode) (*fat.FS, func() error, error) {
	ffs, err := fat.OpenWithOptions(v, v.Size(), fat.Options{ReadOnly: mode == fatRead, NoRecovery: mode == fatRepair})
	if err != nil {
		if errors.Is(err, fat.ErrNotFAT) || errors.Is(err, fat.ErrTooSmall) {
			err = notFATError(v, path, mode != fatRead, err)
		} else {
			err = withCode(exitDamaged, err)
		}
		v.Close()
		return nil, nil, err
	}
	closer := func() error {
		err := ffs.Close()
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if mode == fatRead && ffs.Dirty() {
		warnDirtyFAT(a, path)
	}
	if r := ffs.Recovery(); r != nil {
		a.warnf("the volume was not closed cleanly (an operation was interrupted); recovered it:")
		for _, l := range r.Repaired {
			fmt.Fprintf(a.stderr, "  %s\n", l)
		}
	}
	if mode == fatWrite {
		if err := ffs.NeedsRepair(); err != nil {
			closer()
			return nil, nil, withCode(exitDamaged, fmt.Errorf("%v; nothing was changed: run 'cryptvol fsck %s --repair' first", err, path))
		}
	}
	return ffs, closer, nil
}

// closeFAT closes what openFAT opened and returns err, or else the close's
// error, mapped onto the CLI's exit codes; volPath names the volume in
// the advice given with them.
func closeFAT(done func() error, err error, volPath string) error {
	if cerr := done(); err == nil {
		err = cerr
	}
	if errors.Is(err, fat.ErrNeedsRepair) {
		return withCode(exitDamaged, fmt.Errorf("%w; run 'cryptvol fsck %s --repair'", err, volPath))
	}
	return fatError(err)
}

// fatExitCode maps filesystem errors onto the CLI's exit codes.
func fatError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fat.ErrNeedsRepair):
		return withCode(exitDamaged, fmt.Errorf("%w; run 'cryptvol fsck VOLUME --repair'", err))
	case errors.Is(err, fat.ErrCorrupt):
		return withCode(exitDamaged, err)
	case errors.Is(err, volume.ErrProtected), errors.Is(err, volume.ErrReadOnly):
		return withCode(exitDestroy, err)
	case errors.Is(err, fat.ErrNoSpace):
		return withCode(exitIO, err)
	}
	return err
}
