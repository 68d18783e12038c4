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
			return nil, nil, withCode(exitDamaged, fmt.Errorf("the volume holds no filesystem cryptvol recognises (FAT, ext2/3/4, NTFS); to create a FAT one (erasing the volume's content): 'cryptvol format %s --filesystem fat'", path))
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
	return fsys, closer, nil
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
			return withCode(exitDamaged, fmt.Errorf("writing %s needs `cryptvol mount` (coming) — read-only here (ls, get, df, info work)", r.Type))
		}
		return withCode(exitDamaged, fmt.Errorf("checking %s is not built in yet — read-only here (ls, get, df, info work)", r.Type))
	}
	return withCode(exitDamaged, fmt.Errorf("the volume holds no FAT filesystem (%v); create one with 'cryptvol format %s --filesystem fat'", err, path))
}

// openFAT unlocks the volume and opens the FAT filesystem inside it.
// Closing the returned func flushes the filesystem and closes the volume.
func openFAT(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string, write bool) (*fat.FS, func() error, error) {
	v, err := openVolume(ctx, a, fs, cf, path, !write)
	if err != nil {
		return nil, nil, err
	}
	ffs, err := fat.OpenWithOptions(v, v.Size(), fat.Options{ReadOnly: !write})
	if err != nil {
		if errors.Is(err, fat.ErrNotFAT) || errors.Is(err, fat.ErrTooSmall) {
			err = notFATError(v, path, write, err)
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
	return ffs, closer, nil
}

// closeFAT closes what openFAT opened and returns err, or else the close's
// error, mapped onto the CLI's exit codes.
func closeFAT(done func() error, err error) error {
	if cerr := done(); err == nil {
		err = cerr
	}
	return fatError(err)
}

// fatExitCode maps filesystem errors onto the CLI's exit codes.
func fatError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, fat.ErrCorrupt):
		return withCode(exitDamaged, err)
	case errors.Is(err, volume.ErrProtected), errors.Is(err, volume.ErrReadOnly):
		return withCode(exitDestroy, err)
	case errors.Is(err, fat.ErrNoSpace):
		return withCode(exitIO, err)
	}
	return err
}
