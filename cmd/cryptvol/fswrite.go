package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/fsops"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// openWrite unlocks the volume for writing (its lock held until done) and
// opens the filesystem inside: FAT (also for a volume with no filesystem
// recognised, which openFATTree explains), exFAT and ext2/3/4 in process
// through filesystem.Writer, NTFS with ntfs-3g stacked on a raw mount.
// done closes everything; for a driver tree it unmounts the driver (which
// writes all it holds) before the raw mount.
func openWrite(ctx context.Context, a *app, fl *pflag.FlagSet, cf *credFlags, volArg string) (fsops.Target, func() error, error) {
	v, err := openVolume(ctx, a, fl, cf, volArg, false)
	if err != nil {
		return nil, nil, err
	}
	r, perr := fsprobe.Probe(v)
	switch {
	case perr == nil && r.Type == "exfat":
		return openExFATTree(a, v, volArg)
	case perr == nil && isInProcessType(r.Type):
		return openExt4Tree(a, v, r.Type)
	case perr == nil && mount.DriverName(r.Type) != "":
		return openDriverTree(ctx, a, v, r.Type, volArg)
	}
	return openFATTree(a, v, volArg)
}

// closeTree closes what openWrite opened and returns err, or else the
// close's error, with the CLI's exit codes; volArg names the volume in
// the advice given with them.
func closeTree(done func() error, err error, volArg string) error {
	switch cerr := done(); {
	case err == nil:
		err = cerr
	case errors.Is(cerr, volume.ErrProtected) && !errors.Is(err, volume.ErrProtected):
		// A driver's EPERM was hidden-volume protection: say so.
		err = fmt.Errorf("%v: %w", err, cerr)
	}
	return fsErrorIn(volArg, err)
}

// openDriverTree opens v's filesystem for reading; the first change
// serves v's raw data area in a private directory, stacks the
// filesystem's driver on it in another, and goes on through that.
func openDriverTree(ctx context.Context, a *app, v *volume.Volume, fstype, volArg string) (fsops.Target, func() error, error) {
	fail := func(err error) (fsops.Target, func() error, error) {
		v.Close()
		return nil, nil, err
	}
	ro, err := filesystem.OpenAs(fstype, v, v.Size(), filesystem.Options{})
	if err != nil {
		return fail(fsError(err))
	}
	// Refused before anything is read further: no driver, no FUSE.
	allowRoot, err := mount.DriverNeedsAllowRoot(fstype)
	if err == nil {
		if aerr := mount.Available(); aerr != nil {
			err = withCode(exitIO, fmt.Errorf("writing %s goes through %s, which needs FUSE: %w", fstype, mount.DriverName(fstype), aerr))
		}
	} else {
		err = withCode(exitDamaged, err)
	}
	if err != nil {
		ro.Close()
		return fail(err)
	}
	var helper *rawHelper
	t := fsops.NewRootTree(fstype, ro, func() (*os.Root, error) {
		var err error
		// What a killed command left would block this one (issue 25).
		mount.CleanPrivateMounts(os.TempDir())
		// The raw file is served by a helper process, so that this one
		// is only a client of the driver (see rawserve.go): no process
		// is both the server of a file and a client of a mount on it.
		container, _ := filepath.Abs(volArg)
		helper, err = startRawHelper(ctx, a.stderr, v, rawServeSecret{FSType: fstype, Container: container, AllowRoot: allowRoot})
		if err != nil {
			return nil, err
		}
		root, err := os.OpenRoot(helper.filesDir())
		if err != nil {
			return nil, withCode(exitIO, err)
		}
		return root, nil
	})
	done := func() error {
		var err error
		t.Close()
		// The driver writes everything it holds into the raw file and
		// exits; only then may the raw mount (and the volume) go.
		if helper != nil {
			err = helper.finish()
		}
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return t, done, nil
}

// opError gives an error of fsops the CLI's exit code: each Kind its
// code, Failed the filesystem's (fsError), InVolume exit 1 where the path
// names nothing.
func opError(err error) error {
	e, ok := err.(*fsops.Error)
	if !ok {
		return err
	}
	inner := opError(e.Err)
	switch e.Kind {
	case fsops.Failed:
		return fsError(inner)
	case fsops.InVolume:
		return inVolume(inner)
	case fsops.BadUsage:
		return usageError(inner)
	case fsops.BadOperand:
		return badOperand(inner)
	case fsops.WouldDestroy:
		return withCode(exitDestroy, inner)
	case fsops.NoRoom:
		return withCode(exitIO, inner)
	case fsops.Interrupted:
		return withCode(exitCancelled, inner)
	}
	return inner
}

// badOperand is exit 1 without the usage hint.
func badOperand(err error) error { return &cliError{code: exitUsage, err: err, notUsage: true} }
