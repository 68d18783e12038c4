package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/volume"
)

// openFAT unlocks the volume and opens the FAT filesystem inside it.
// Closing the returned func flushes the filesystem and closes the volume.
func openFAT(ctx context.Context, a *app, fs *pflag.FlagSet, cf *credFlags, path string, write bool) (*fat.FS, func() error, error) {
	v, err := openVolume(ctx, a, fs, cf, path, !write)
	if err != nil {
		return nil, nil, err
	}
	ffs, err := fat.OpenWithOptions(v, v.Size(), fat.Options{ReadOnly: !write})
	if err != nil {
		v.Close()
		if errors.Is(err, fat.ErrNotFAT) || errors.Is(err, fat.ErrTooSmall) {
			return nil, nil, withCode(exitDamaged, fmt.Errorf("the volume holds no FAT filesystem (%v); create one with 'cryptvol format %s --filesystem fat'", err, path))
		}
		return nil, nil, withCode(exitDamaged, err)
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
