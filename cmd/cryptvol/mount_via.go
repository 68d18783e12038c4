package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/mount/cgofs"
	"github.com/cryptvol/cryptvol/serve/nfs"
	"github.com/cryptvol/cryptvol/serve/webdav"
	"github.com/cryptvol/cryptvol/volume"
)

// modeWinFsp is the mount table's mode of a mount through mount/cgofs
// (WinFsp), beside mount.ModeWebDAV and modeNFS.
const modeWinFsp = "winfsp"

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
	volPath, err := filepath.Abs(vol)
	if err != nil {
		return err
	}
	if _, err := os.Stat(volPath); err != nil {
		return withCode(exitIO, err)
	}
	if e, err := mount.DefaultTable().Find(volPath); err == nil && e.Volume == volPath && e.Alive {
		return withCode(exitDestroy, fmt.Errorf("%s is already mounted at %s: mounting it twice would corrupt it", volPath, e.MountPoint))
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

	info := v.Info()
	e := mount.Entry{PID: os.Getpid(), Volume: volPath, MountPoint: dir, ReadOnly: mf.readOnly,
		Format: info.Format, Hidden: info.Hidden, Started: time.Now().Round(time.Second)}
	// done is the WinFsp mount's end, served a server's (which is read
	// once only: Shutdown reads it after a signal).
	var done <-chan struct{}
	var served <-chan error
	var stop func() error
	var lines []string
	switch front {
	case mount.FrontWinFsp:
		m, err := cgofs.Mount(dir, fsys, cgofs.Options{ReadOnly: mf.readOnly, FsName: filepath.Base(volPath), Debug: mf.debug})
		if err != nil {
			fsys.Close()
			return withCode(exitIO, err)
		}
		e.Mode, done, stop = modeWinFsp, m.Done(), m.Unmount
		lines = []string{fmt.Sprintf("Mounted %s at %s through %s (%s).", volPath, dir, cgofs.Layer(), why)}
	case mount.FrontWebDAV:
		s, err := webdav.Start(fsys, webdav.Config{Listen: "127.0.0.1:0", ReadOnly: mf.readOnly})
		if err != nil {
			fsys.Close()
			return withCode(exitIO, err)
		}
		e.Mode, e.MountPoint = mount.ModeWebDAV, s.URL
		served, stop = s.Done(), func() error { return shutdownWithin(s.Shutdown) }
		lines = append([]string{fmt.Sprintf("Serving %s over WebDAV at %s (%s). Connect with:", volPath, s.URL, why)},
			mount.WebDAVConnect(dir, s.URL, s.User, s.Password)...)
	case mount.FrontNFS:
		s, err := nfs.Start(fsys, nfs.Config{Listen: "127.0.0.1:0", ReadOnly: mf.readOnly, Verbose: a.verbose})
		if err != nil {
			fsys.Close()
			return withCode(exitIO, err)
		}
		e.Mode, e.MountPoint = modeNFS, s.URL
		served, stop = s.Done(), func() error { return shutdownWithin(s.Shutdown) }
		host, _, _ := net.SplitHostPort(s.Addr)
		lines = append([]string{fmt.Sprintf("Serving %s over NFSv3 at %s (%s); the export path is the only secret. Mount with:", volPath, s.URL, why)},
			mount.NFSConnect(dir, host, s.Port, s.Export)...)
	default:
		fsys.Close()
		return usageError(fmt.Errorf("front end %s is not served here", front))
	}

	table := mount.DefaultTable()
	terr := table.Init()
	if terr == nil {
		terr = table.Put(e)
	}
	if terr != nil {
		a.warnf("%v ('cryptvol list' will not show this mount)", terr)
	}
	defer table.Remove(e.PID)
	for _, l := range lines {
		fmt.Fprintln(a.stdout, l)
	}
	fmt.Fprintln(a.stdout, "Press Ctrl-C (or run 'cryptvol unmount "+volPath+"') to stop.")

	select {
	case <-done:
		err = stop()
	case err = <-served:
		// The server stopped by itself (a listener error).
	case <-ctx.Done():
		err = stop()
	}
	if cerr := fsys.Close(); err == nil && !errors.Is(cerr, os.ErrClosed) {
		err = cerr
	}
	if verr := v.Close(); err == nil {
		err = verr
	}
	if err != nil {
		return withCode(exitIO, err)
	}
	fmt.Fprintln(a.stderr, "Stopped; the volume is closed.")
	return nil
}

// shutdownWithin stops a server, giving the requests under way a minute.
func shutdownWithin(shutdown func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return shutdown(ctx)
}
