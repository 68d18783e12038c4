package mount

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// UnmountAll unmounts every mount the table records, each as
// UnmountRecorded does; one that fails does not stop the others: failed
// hears of each (it may be nil), and the first error is returned once all
// were tried. n is how many mounts there were.
func UnmountAll(ctx context.Context, table Table, force bool, timeout time.Duration, failed func(Entry, error)) (n int, err error) {
	es, err := table.Entries()
	if err != nil {
		return 0, fail(KindIO, err)
	}
	var first error
	for _, e := range es {
		if err := UnmountRecorded(ctx, table, e, force, timeout); err != nil {
			if failed != nil {
				failed(e, err)
			}
			if first == nil {
				first = fmt.Errorf("%s was not unmounted: %w", e.MountPoint, err)
			}
		}
	}
	return len(es), first
}

// UnmountRecorded unmounts the mount of record e and waits for its
// daemon to finish writing and exit.
func UnmountRecorded(ctx context.Context, table Table, e Entry, force bool, timeout time.Duration) error {
	if (force || e.Mode == ModeWebDAV || e.Mode == ModeNFS || e.Mode == ModeWinFsp) && e.Alive {
		// A WebDAV or NFS server has no mount to take away: SIGTERM makes it
		// finish the requests under way, close the volume and exit.
		if err := Terminate(e.PID); err != nil {
			return fail(KindIO, err)
		}
	} else if err := unmountEntry(e, force); err != nil {
		return err
	}
	if err := WaitForExit(ctx, e.PID, timeout); err != nil {
		return err
	}
	// A daemon that could not flush leaves its record with the error.
	es, _ := table.Entries()
	for _, x := range es {
		if x.PID == e.PID && x.Error != "" {
			table.Remove(e.PID)
			return fail(KindIO, fmt.Errorf("the mount of %s ended with an error: %s", e.Volume, x.Error))
		}
	}
	table.Remove(e.PID)
	return nil
}

// UnmountUnrecorded unmounts dir, a mount no record describes (another
// runtime directory, or a crashed daemon), with the errors UnmountRecorded
// gives.
func UnmountUnrecorded(dir string, force bool) error {
	return unmountFailure(Unmount(dir, force), dir)
}

// unmountEntry unmounts what the record says is mounted; the daemon sees
// its FUSE mount go, flushes and exits.
func unmountEntry(e Entry, lazy bool) error {
	if e.Mode == ModeLoop {
		if err := Unmount(e.MountPoint, lazy); err != nil && !errors.Is(err, ErrNotMounted) {
			return unmountFailure(err, e.MountPoint)
		}
		// The loop device releases the raw file asynchronously.
		var err error
		for i := 0; i < 200; i++ {
			err = Unmount(e.AuxDir, false)
			if !errors.Is(err, ErrBusy) {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if errors.Is(err, ErrNotMounted) {
			err = nil
		}
		return unmountFailure(err, e.AuxDir)
	}
	// A user-space driver the user ran on a --raw file (ntfs-3g, fuse2fs)
	// closes it just after its own unmount returns: give it two seconds
	// before calling the mount busy.
	var err error
	for i := 0; i < 80; i++ {
		if err = Unmount(e.MountPoint, lazy); !errors.Is(err, ErrBusy) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if errors.Is(err, ErrNotMounted) && !e.Alive {
		return nil
	}
	return unmountFailure(err, e.MountPoint)
}

// unmountFailure classifies an unmount's error: busy says who to ask,
// not mounted is the caller's mistake.
func unmountFailure(err error, dir string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrBusy):
		return fail(KindIO, fmt.Errorf("%s is busy: close the files and shells using it (fuser -vm %s shows them), or use --force", dir, dir))
	case errors.Is(err, ErrNotMounted):
		return fail(KindUsage, err)
	}
	return fail(KindIO, err)
}

// WaitForExit waits until the mount's process has flushed and exited, at
// most timeout; a cancelled ctx returns its error as it is.
func WaitForExit(ctx context.Context, pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for ProcessAlive(pid) {
		if time.Now().After(deadline) {
			return fail(KindIO, fmt.Errorf("the mount's process (PID %d) is still running after %v; see 'cryptvol list'", pid, timeout))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
