package mount

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/mount/cgofs"
	"github.com/cryptvol/cryptvol/serve/nfs"
	"github.com/cryptvol/cryptvol/serve/webdav"
	"github.com/cryptvol/cryptvol/volume"
)

// ViaOptions say how ServeVia serves a volume's files.
type ViaOptions struct {
	Front FrontEnd // FrontWinFsp, FrontWebDAV or FrontNFS
	Why   string   // why that front end (ChooseFrontEnd), for the first line
	// Volume is the container's absolute path; Dir the mount point or
	// drive letter asked for (WinFsp mounts there, the servers print it in
	// their connect lines).
	Volume, Dir string
	ReadOnly    bool
	Debug       bool      // WinFsp: log every request
	Verbose     bool      // NFS: log every request's error
	Out         io.Writer // where it was mounted and how to connect
	Warn        func(string)
	Table       Table
}

// ServeVia serves fsys, the filesystem of v, through a front end other
// than the go-fuse mount: WinFsp, or a loopback WebDAV or NFS server for
// the system's own client, whose connect lines it writes to o.Out. It
// stays until ctx is cancelled (Ctrl-C, SIGTERM, `cryptvol unmount
// VOLUME`) or the front end ends, then closes fsys and v.
func ServeVia(ctx context.Context, v *volume.Volume, fsys filesystem.FS, o ViaOptions) error {
	info := v.Info()
	e := Entry{PID: os.Getpid(), Volume: o.Volume, MountPoint: o.Dir, ReadOnly: o.ReadOnly,
		Format: info.Format, Hidden: info.Hidden, Started: time.Now().Round(time.Second)}
	// done is the WinFsp mount's end, served a server's (which is read
	// once only: Shutdown reads it after a signal).
	var done <-chan struct{}
	var served <-chan error
	var stop func() error
	var lines []string
	switch o.Front {
	case FrontWinFsp:
		m, err := cgofs.Mount(o.Dir, fsys, cgofs.Options{ReadOnly: o.ReadOnly, FsName: filepath.Base(o.Volume), Debug: o.Debug})
		if err != nil {
			fsys.Close()
			return fail(KindIO, err)
		}
		e.Mode, done, stop = ModeWinFsp, m.Done(), m.Unmount
		lines = []string{fmt.Sprintf("Mounted %s at %s through %s (%s).", o.Volume, o.Dir, cgofs.Layer(), o.Why)}
	case FrontWebDAV:
		s, err := webdav.Start(fsys, webdav.Config{Listen: "127.0.0.1:0", ReadOnly: o.ReadOnly})
		if err != nil {
			fsys.Close()
			return fail(KindIO, err)
		}
		e.Mode, e.MountPoint = ModeWebDAV, s.URL
		served, stop = s.Done(), func() error { return shutdownWithin(s.Shutdown) }
		lines = append([]string{fmt.Sprintf("Serving %s over WebDAV at %s (%s). Connect with:", o.Volume, s.URL, o.Why)},
			WebDAVConnect(o.Dir, s.URL, s.User, s.Password)...)
	case FrontNFS:
		s, err := nfs.Start(fsys, nfs.Config{Listen: "127.0.0.1:0", ReadOnly: o.ReadOnly, Verbose: o.Verbose})
		if err != nil {
			fsys.Close()
			return fail(KindIO, err)
		}
		e.Mode, e.MountPoint = ModeNFS, s.URL
		served, stop = s.Done(), func() error { return shutdownWithin(s.Shutdown) }
		host, _, _ := net.SplitHostPort(s.Addr)
		lines = append([]string{fmt.Sprintf("Serving %s over NFSv3 at %s (%s); the export path is the only secret. Mount with:", o.Volume, s.URL, o.Why)},
			NFSConnect(o.Dir, host, s.Port, s.Export)...)
	default:
		fsys.Close()
		return fail(KindUsage, fmt.Errorf("front end %s is not served here", o.Front))
	}

	defer record(o.Table, e, "mount", o.Warn)()
	for _, l := range lines {
		fmt.Fprintln(o.Out, l)
	}
	fmt.Fprintln(o.Out, "Press Ctrl-C (or run 'cryptvol unmount "+o.Volume+"') to stop.")

	var err error
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
	return fail(KindIO, err)
}

// record puts e in the table (warning, as what, if it cannot: the serve
// goes on unlisted) and returns what removes it again.
func record(table Table, e Entry, what string, warn func(string)) (remove func()) {
	err := table.Init()
	if err == nil {
		err = table.Put(e)
	}
	if err != nil && warn != nil {
		warn(fmt.Sprintf("%v ('cryptvol list' will not show this %s)", err, what))
	}
	return func() { table.Remove(e.PID) }
}

// shutdownWithin stops a server, giving the requests under way a minute.
func shutdownWithin(shutdown func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return shutdown(ctx)
}
