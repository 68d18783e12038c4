package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

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
	if d, ok := fsys.(filesystem.Dirtier); ok && fsys.Type() == "vfat" && d.Dirty() {
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
func fsError(err error) error { return fsErrorIn("VOLUME", err) }

// fsErrorIn is fsError with volArg named in the advice.
func fsErrorIn(volArg string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, filesystem.ErrNeedsRepair):
		return withCode(exitDamaged, fmt.Errorf("%w; run 'cryptvol fsck %s --repair'", err, volArg))
	case errors.Is(err, filesystem.ErrCorrupt), errors.Is(err, filesystem.ErrUnsupported), errors.Is(err, filesystem.ErrTooSmall):
		return withCode(exitDamaged, err)
	case errors.Is(err, volume.ErrProtected), errors.Is(err, volume.ErrReadOnly):
		return withCode(exitDestroy, err)
	case errors.Is(err, filesystem.ErrNoSpace):
		return withCode(exitIO, err)
	}
	return err
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
