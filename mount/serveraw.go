package mount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// ServeRaw is the helper's side of StartRawHelper (see rawhelper.go): it
// reads the request from secret, reopens the volume on the inherited
// container file, serves its raw file, runs the driver on it, reports
// ready on d, and tears everything down when the command's lifeline
// closes, a signal cancels ctx, or the driver or the raw mount ends.
func ServeRaw(ctx context.Context, secret []byte, d *Daemon) error {
	file := DaemonFile(0, "volume")
	lifeline := DaemonFile(1, "lifeline")
	var s RawServeRequest
	if err := json.Unmarshal(secret, &s); err != nil {
		file.Close()
		return fmt.Errorf("reading the volume from the command: %w", err)
	}
	var snap volume.Snapshot
	err := snap.UnmarshalBinary(s.Snapshot)
	clear(s.Snapshot)
	if err != nil {
		file.Close()
		return fmt.Errorf("reading the volume from the command: %w", err)
	}
	v, err := volume.ReopenFile(ctx, file, &snap, volume.Options{ReadOnly: s.ReadOnly, Warn: func(msg string) { fmt.Fprintln(d, "cryptvol: warning:", msg) }})
	snap.Wipe()
	if err != nil {
		return fail(KindIO, err)
	}
	// The lifeline: EOF when the command ends, however it ends.
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, lifeline)
		close(gone)
	}()

	tmp, err := os.MkdirTemp("", PrivateDirPattern())
	if err != nil {
		v.Close()
		return fail(KindIO, err)
	}
	rawDir, filesDir := filepath.Join(tmp, "raw"), filepath.Join(tmp, "files")
	dirs := []string{rawDir, filesDir}
	if s.MountPoint != "" {
		filesDir, dirs = s.MountPoint, dirs[:1]
	}
	cleanDirs := func() {
		for _, dir := range dirs {
			os.Remove(dir)
		}
		os.Remove(tmp)
	}
	for _, dir := range dirs {
		if err := os.Mkdir(dir, 0o700); err != nil {
			v.Close()
			cleanDirs()
			return fail(KindIO, err)
		}
	}
	// The logger says which write hidden-volume protection refused: the
	// driver above only sees EPERM.
	m, err := MountRaw(rawDir, v, Options{FsName: s.Container, Container: s.Container, AllowRoot: s.AllowRoot, ReadOnly: s.ReadOnly,
		Logger: log.New(d, "cryptvol: ", 0)})
	if err != nil {
		v.Close()
		cleanDirs()
		return fail(KindIO, err)
	}
	raw := filepath.Join(rawDir, RawFileName)
	drv, err := StartDriver(s.FSType, raw, filesDir, DriverOptions{ReadOnly: s.ReadOnly, AllowOther: s.AllowOther, Log: d})
	if err != nil {
		m.Shutdown()
		v.Close()
		cleanDirs()
		return fail(KindUnservable, err)
	}
	d.ReadyWith(rawServeInfo{Dir: tmp, Files: filesDir, Raw: raw, DriverPID: drv.PID(), Private: s.MountPoint == "" && PrivateMountsAvailable()})

	var ended error
	select {
	case <-gone:
	case <-ctx.Done():
		// SIGTERM from outside (a shutdown): the command's writes fail
		// from here on, but what the driver holds is written.
		ended = errors.New("the process serving the raw file was told to stop (SIGTERM)")
	case <-drv.Done():
		if s.MountPoint != "" {
			// Unmounted (cryptvol unmount, fusermount3 -u): the end of
			// a mount, an error only if the driver says so.
			ended = drv.Wait()
		} else {
			ended = fmt.Errorf("%s ended while the command was writing: %v", drv.Name(), drv.Wait())
		}
	case <-m.Done():
		ended = fmt.Errorf("the raw file's mount went away while the command was writing: %v", m.Wait())
	}
	// The command is done (or dead, and its open files closed by the
	// kernel): the driver writes everything it holds and exits; a mount
	// still busy is detached and finishes when its last file closes.
	err = drv.Unmount(false, 5*time.Minute)
	if errors.Is(err, ErrBusy) {
		err = drv.Unmount(true, 5*time.Minute)
	}
	if err != nil && ended == nil {
		ended = fmt.Errorf("finishing the writes through %s: %w", drv.Name(), err)
	}
	if serr := m.Shutdown(); serr != nil && ended == nil {
		ended = serr
	}
	if cerr := v.Close(); cerr != nil && ended == nil {
		ended = cerr
	}
	cleanDirs()
	if ended != nil {
		return fail(KindIO, ended)
	}
	if v.ProtectionTriggered() {
		what := fmt.Sprintf("a write of %s was refused, and every write after it (the hidden volume is intact; the outer filesystem may need a check)", drv.Name())
		if s.MountPoint != "" {
			// A mount's programs got their EPERM; its end is no error,
			// as VeraCrypt's dismount is not.
			fmt.Fprintf(d, "cryptvol: warning: hidden volume protection triggered: %s\n", what)
			return nil
		}
		// The command saw only EPERM from the driver: this tells it why
		// (exit 5, as an in-process writer's refusal).
		return fmt.Errorf("%w: %s", volume.ErrProtected, what)
	}
	return nil
}
