package mount

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// ServeOptions say what Serve mounts, where and how.
type ServeOptions struct {
	Volume, MountPoint string // absolute paths
	// Raw serves the data area as MountPoint/volume; Loop (Linux, root)
	// puts it on a loop device mounted on MountPoint as FSType ("":
	// detected).
	Raw, Loop  bool
	FSType     string
	AllowOther bool
	Debug      bool // log every FUSE request
	// Open unlocks the volume, once the lock holder names this mount.
	Open func(context.Context) (*volume.Volume, error)
	// Daemon is the background process's pipe to its parent; nil in the
	// foreground.
	Daemon *Daemon
	// Messages takes the foreground mount's log and its Mounted and
	// Unmounted lines (a daemon logs to its log file).
	Messages io.Writer
	// Warn hears what goes wrong without ending the mount.
	Warn func(string)
	// HelperArgs start the raw file's helper of a stacked driver (the
	// program and its subcommand that calls ServeRaw).
	HelperArgs []string
	Table      Table
}

// Serve unlocks the volume, mounts it and serves until it is unmounted
// or ctx is cancelled (a signal): then it unmounts, every accepted write
// in the container, and closes the volume. The mount is in o.Table while
// it lasts; a failure to finish stays there, in the entry's Error.
func Serve(ctx context.Context, o ServeOptions) error {
	// The lock on the volume, exclusive for a read-write mount, is held
	// from here until the mount ends; others are told where it is mounted.
	volume.SetLockHolder("cryptvol mount", o.MountPoint)
	v, err := o.Open(ctx)
	if err != nil {
		return err
	}
	defer v.Close()

	table := o.Table
	if err := table.Init(); err != nil {
		return fail(KindIO, err)
	}
	pid := os.Getpid()
	logOut := o.Messages
	var logFile *os.File
	if o.Daemon != nil {
		logFile, err = os.OpenFile(table.LogPath(pid), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fail(KindIO, fmt.Errorf("mount log: %w", err))
		}
		defer func() {
			logFile.Close()
			// A log nobody wrote to (or of a mount that never was) goes.
			if fi, err := os.Stat(logFile.Name()); err == nil && fi.Size() == 0 {
				os.Remove(logFile.Name())
			}
		}()
		logOut = logFile
	}
	logger := log.New(logOut, "cryptvol mount: ", log.LstdFlags)
	info := v.Info()
	e := Entry{
		PID: pid, Volume: o.Volume, MountPoint: o.MountPoint, Mode: ModeFiles, ReadOnly: v.ReadOnly(),
		Format: info.Format, Hidden: info.Hidden, Started: time.Now().Round(time.Second),
	}
	if logFile != nil {
		e.Log = logFile.Name()
	}
	mo := Options{ReadOnly: v.ReadOnly(), FsName: o.Volume, Container: o.Volume, AllowOther: o.AllowOther, Debug: o.Debug, Logger: logger}

	m, helper, err := startMount(ctx, v, o, &e, mo)
	if err != nil {
		return err
	}
	if err := table.Put(e); err != nil {
		o.warn(fmt.Sprintf("%v ('cryptvol list' will not show this mount)", err))
	}
	access := "read-write"
	if e.ReadOnly {
		access = "read-only"
	}
	if o.Daemon != nil {
		o.Daemon.Ready()
		// From now on everything, even a crash report, goes to the log;
		// and the daemon holds no directory busy.
		RedirectStderr(logFile)
		os.Chdir("/")
	} else {
		fmt.Fprintf(o.Messages, "Mounted %s at %s (%s, %s). Press Ctrl-C or run 'cryptvol unmount %s' to unmount.\n",
			o.Volume, o.MountPoint, describeMode(e), access, o.MountPoint)
	}

	serveErr := waitServed(ctx, m, helper, &e, logger)
	if cerr := v.Close(); serveErr == nil {
		serveErr = cerr
	}
	if e.AuxDir != "" {
		os.Remove(e.AuxDir) // the private mount point, empty again
	}
	if serveErr != nil {
		logger.Printf("unmounting: %v", serveErr)
		e.Error = serveErr.Error()
		table.Put(e)
		return fail(KindIO, serveErr)
	}
	table.Remove(pid)
	if o.Daemon == nil {
		fmt.Fprintf(o.Messages, "Unmounted %s.\n", o.MountPoint)
	}
	return nil
}

func (o ServeOptions) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}

// waitServed waits until the mount ends or ctx is cancelled, then ends
// it, and returns how it ended.
func waitServed(ctx context.Context, m *Mount, helper *RawHelper, e *Entry, logger *log.Logger) error {
	if helper != nil {
		// The helper serves the raw file and runs the driver; it ends
		// when the files are unmounted, or, told by Finish, unmounts
		// them (detached if busy).
		select {
		case <-helper.Done():
		case <-ctx.Done():
			logger.Printf("signal received: unmounting %s", e.MountPoint)
		}
		return helper.Finish()
	}
	select {
	case <-m.Done():
		return m.Wait()
	case <-ctx.Done():
		logger.Printf("signal received: unmounting %s", e.MountPoint)
		return shutdownMount(m, e, logger)
	}
}

// describeMode says how the entry's volume is mounted, for the Mounted
// line.
func describeMode(e Entry) string {
	switch e.Mode {
	case ModeRaw:
		return "raw data area in " + e.RawFile
	case ModeLoop:
		return fmt.Sprintf("%s on %s", e.FSType, e.LoopDevice)
	case ModeDriver:
		return "files through " + e.FSType
	}
	return "files"
}
