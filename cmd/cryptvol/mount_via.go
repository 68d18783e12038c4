package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/mount/cgofs"
	"github.com/cryptvol/cryptvol/volume"
)

// runMountVia is `cryptvol mount` through a front end other than the
// go-fuse mount (mount.ChooseFrontEnd picks it per platform, --via
// overrides): WinFsp, or a loopback WebDAV or NFS serve for the system's
// own client, whose connect line it prints. It stays in the foreground
// until Ctrl-C, SIGTERM or `cryptvol unmount VOLUME`, holding the
// volume's lock.
func runMountVia(ctx context.Context, a *app, fl *pflag.FlagSet, cf *credFlags, mf *mountFlags, front mount.FrontEnd, why, vol, dir string) error {
	switch {
	case mf.raw || mf.loop:
		return usageError(fmt.Errorf("--raw and --loop are FUSE mounts; the %s front end serves the files", front))
	case mf.allowOther:
		return usageError(fmt.Errorf("--allow-other is a FUSE option; the %s front end serves the mounting user only", front))
	}
	if front == mount.FrontWinFsp {
		if err := cgofs.Available(); err != nil {
			return withCode(exitIO, err)
		}
	}
	volPath, err := mount.VolumePath(mount.DefaultTable(), vol)
	if err != nil {
		return fromMount(err)
	}
	volume.SetLockHolder("cryptvol mount", dir)
	v, err := openVolume(ctx, a, fl, cf, volPath, mf.readOnly)
	if err != nil {
		return err
	}
	defer v.Close()
	fsys, err := filesystem.Open(v, v.Size(), filesystem.Options{Writable: !mf.readOnly})
	if err != nil {
		return fsError(err)
	}
	if _, ok := fsys.(filesystem.Writer); !ok && !mf.readOnly {
		a.warnf("%s is read-only in cryptvol: mounting it read-only", fsys.Type())
	}

	err = mount.ServeVia(ctx, v, fsys, mount.ViaOptions{Front: front, Why: why, Volume: volPath, Dir: dir,
		ReadOnly: mf.readOnly, Debug: mf.debug, Verbose: a.verbose, Out: a.stdout,
		Warn: func(msg string) { a.warnf("%s", msg) }, Table: mount.DefaultTable()})
	if err != nil {
		return fromMount(err)
	}
	fmt.Fprintln(a.stderr, "Stopped; the volume is closed.")
	return nil
}
