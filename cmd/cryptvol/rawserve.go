package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// A write through a stacked driver (NTFS through ntfs-3g) needs three
// processes, because one process that both serves the raw FUSE file and is
// a client of the driver stacked on it deadlocks when it is killed: its
// dying thread waits in D state for the driver, the driver for the raw
// file, and the raw file for the dead process (issue 25, item 4). So:
//
//	command (put, rm, mv)  client of the driver's mount, nothing else
//	  └ serve-raw helper   serves the raw file, runs the driver, tears down
//	      └ ntfs-3g        client of the raw file, server of the files
//
// The helper is this program again, started as a mount daemon is
// (mount.StartChild: the secret on a pipe, JSON status lines back). It
// unlocks nothing: the command hands it the open container file (an
// inherited descriptor, so the volume's flock, which belongs to that open
// file, covers the helper too and no other process can slip in between)
// and a volume.Snapshot of the data-area keys over the secret pipe; the
// helper rebuilds the volume with volume.ReopenFile. The keys so never
// touch disk, argv or the environment, and no password is handed over.
//
// Whichever side dies, the other notices: the helper reads EOF on a
// lifeline pipe when the command ends (closed on purpose, or by the kernel
// after a SIGKILL), then unmounts the driver (which writes all it holds),
// its raw mount, closes the volume and exits; the command sees the helper
// exit (it is its child) and fails. As root the helper runs in a mount
// namespace of its own: nobody else sees the two mounts, and the command
// reaches the files through /proc/HELPER/root.

func init() {
	register(&command{
		name:    "serve-raw",
		summary: "the helper process that serves a volume's raw file to a stacked driver",
		hidden:  true,
		usage: `Usage: cryptvol serve-raw

Started by put, rm, mkdir and mv on a filesystem written through a
user-space driver (NTFS); not for use on its own.
`,
		run: runServeRaw,
	})
}

// rawServeSecret is what the command hands the helper on its secret pipe.
type rawServeSecret struct {
	Snapshot  []byte `json:"snapshot"` // volume.Snapshot, MarshalBinary
	FSType    string `json:"fstype"`
	Container string `json:"container"`
	AllowRoot bool   `json:"allow_root,omitempty"`
	// MountPoint, for `cryptvol mount`: the driver mounts the files there
	// for everyone to see (no namespace), and the helper ends when it is
	// unmounted. Empty for put, rm, mkdir, mv: a private directory.
	MountPoint string `json:"mount_point,omitempty"`
	ReadOnly   bool   `json:"read_only,omitempty"`
	AllowOther bool   `json:"allow_other,omitempty"`
}

// rawServeInfo is the helper's ready message.
type rawServeInfo struct {
	Dir       string `json:"dir"`   // the private directory (raw, files)
	Files     string `json:"files"` // the driver's mount point
	Raw       string `json:"raw"`   // the raw file
	DriverPID int    `json:"driver_pid"`
	// Private: the mounts are in the helper's own mount namespace.
	Private bool `json:"private"`
}

// rawHelper is the command's handle on a running helper.
type rawHelper struct {
	child    *mount.Child
	lifeline *os.File
	info     rawServeInfo
}

// startRawHelper starts the helper on v (which stays open here, unused,
// until the helper has exited) and returns once the driver's mount is up.
// s says what to serve (its Snapshot is filled in here); the helper's
// messages go to msgs.
func startRawHelper(ctx context.Context, msgs io.Writer, v *volume.Volume, s rawServeSecret) (*rawHelper, error) {
	f := v.File()
	if f == nil {
		return nil, withCode(exitDamaged, fmt.Errorf("%s goes through a helper process, which needs the volume on a file: %w", mount.DriverName(s.FSType), volume.ErrNoSnapshot))
	}
	snap, err := v.Snapshot()
	if err != nil {
		return nil, withCode(exitDamaged, fmt.Errorf("%s goes through a helper process that reopens the volume: %w", mount.DriverName(s.FSType), err))
	}
	b, err := snap.MarshalBinary()
	snap.Wipe()
	if err != nil {
		return nil, err
	}
	s.Snapshot = b
	secret, err := json.Marshal(s)
	clear(b)
	if err != nil {
		return nil, err
	}
	defer clear(secret)
	lr, lw, err := mount.Lifeline()
	if err != nil {
		return nil, err
	}
	c, err := mount.StartChild(ctx, []string{os.Args[0], "serve-raw"}, secret, msgs,
		mount.ChildOptions{Files: []*os.File{f, lr}, PrivateMounts: s.MountPoint == ""})
	lr.Close()
	if err != nil {
		lw.Close()
		var de *mount.DaemonError
		if errors.As(err, &de) {
			return nil, withCode(de.Code, errors.New(de.Msg))
		}
		return nil, withCode(exitIO, err)
	}
	h := &rawHelper{child: c, lifeline: lw}
	if err := c.Info(&h.info); err != nil {
		h.finish()
		return nil, withCode(exitIO, fmt.Errorf("the raw file's helper process: %w", err))
	}
	// A helper that dies under the command would leave the driver serving
	// errors from a dead raw file: the driver goes too, so that what the
	// command is doing fails at once rather than at the end.
	go func() {
		<-c.Done()
		h.killDriver()
	}()
	return h, nil
}

// filesDir is where the command reaches the driver's files.
func (h *rawHelper) filesDir() string {
	if h.info.Private {
		return fmt.Sprintf("/proc/%d/root%s", h.child.PID(), h.info.Files)
	}
	return h.info.Files
}

// finish ends the helper: the lifeline closes, the helper unmounts the
// driver (which writes everything into the raw file first), its raw mount
// and the volume, and exits. It returns the helper's error.
func (h *rawHelper) finish() error {
	h.lifeline.Close()
	select {
	case <-h.child.Done():
	case <-time.After(10 * time.Minute):
		h.child.Kill()
		<-h.child.Done()
	}
	err := h.child.Wait()
	h.killDriver()
	if h.info.Dir != "" {
		// What a dead helper could not take down (in a namespace the
		// kernel does, but the directories are in the shared /tmp).
		for _, d := range []string{h.info.Files, filepath.Join(h.info.Dir, "raw")} {
			if _, ok := mount.IsMountPoint(d); ok && !h.info.Private {
				mount.Unmount(d, true)
			}
		}
		if strings.HasPrefix(h.info.Files, h.info.Dir+"/") {
			os.Remove(h.info.Files) // not a mount point of the user's
		}
		os.Remove(filepath.Join(h.info.Dir, "raw"))
		os.Remove(h.info.Dir)
	}
	if err != nil {
		var de *mount.DaemonError
		if errors.As(err, &de) {
			if rest, ok := strings.CutPrefix(de.Msg, volume.ErrProtected.Error()); ok {
				return withCode(de.Code, fmt.Errorf("%w%s", volume.ErrProtected, rest))
			}
			return withCode(de.Code, errors.New(de.Msg))
		}
		return withCode(exitIO, fmt.Errorf("the process serving the raw file (PID %d) ended: %v; what the driver held may be lost", h.child.PID(), err))
	}
	return nil
}

// killDriver kills the helper's driver if it is still running: checked by
// its command line, which names the private directory, so a reused PID is
// left alone.
func (h *rawHelper) killDriver() {
	pid := h.info.DriverPID
	if pid <= 0 || h.info.Dir == "" {
		return
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil && strings.Contains(string(b), h.info.Dir+"/") {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}

// runServeRaw is the helper.
func runServeRaw(ctx context.Context, a *app, args []string) error {
	if !mount.IsDaemon() {
		return usageError(errors.New("serve-raw is started by put, rm, mkdir and mv; it is not a command of its own"))
	}
	secret, d, err := mount.DaemonStart()
	if err != nil {
		return err
	}
	// The helper holds no directory busy, and a Ctrl-C meant for the
	// command (its own session already keeps the terminal's away) does
	// not cut a teardown short: only the lifeline ends it.
	os.Chdir("/")
	err = serveRaw(ctx, secret, d)
	clear(secret)
	if err != nil {
		d.Fail(err, exitCodeFor(err))
	}
	return err
}

func serveRaw(ctx context.Context, secret []byte, d *mount.Daemon) error {
	file := mount.DaemonFile(0, "volume")
	lifeline := mount.DaemonFile(1, "lifeline")
	var s rawServeSecret
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
		return withCode(exitIO, err)
	}
	// The lifeline: EOF when the command ends, however it ends.
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, lifeline)
		close(gone)
	}()

	tmp, err := os.MkdirTemp("", mount.PrivateDirPattern())
	if err != nil {
		v.Close()
		return withCode(exitIO, err)
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
			return withCode(exitIO, err)
		}
	}
	// The logger says which write hidden-volume protection refused: the
	// driver above only sees EPERM.
	m, err := mount.MountRaw(rawDir, v, mount.Options{FsName: s.Container, Container: s.Container, AllowRoot: s.AllowRoot, ReadOnly: s.ReadOnly,
		Logger: log.New(d, "cryptvol: ", 0)})
	if err != nil {
		v.Close()
		cleanDirs()
		return withCode(exitIO, err)
	}
	raw := filepath.Join(rawDir, mount.RawFileName)
	drv, err := mount.StartDriver(s.FSType, raw, filesDir, mount.DriverOptions{ReadOnly: s.ReadOnly, AllowOther: s.AllowOther, Log: d})
	if err != nil {
		m.Shutdown()
		v.Close()
		cleanDirs()
		return withCode(exitDamaged, err)
	}
	d.ReadyWith(rawServeInfo{Dir: tmp, Files: filesDir, Raw: raw, DriverPID: drv.PID(), Private: s.MountPoint == "" && mount.PrivateMountsAvailable()})

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
	if errors.Is(err, mount.ErrBusy) {
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
		return withCode(exitIO, ended)
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
