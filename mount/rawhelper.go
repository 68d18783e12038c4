package mount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

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
// The helper is the program again, started as a mount daemon is
// (StartChild: the secret on a pipe, JSON status lines back). It unlocks
// nothing: the command hands it the open container file (an inherited
// descriptor, so the volume's flock, which belongs to that open file,
// covers the helper too and no other process can slip in between) and a
// volume.Snapshot of the data-area keys over the secret pipe; the helper
// rebuilds the volume with volume.ReopenFile. The keys so never touch
// disk, argv or the environment, and no password is handed over.
//
// Whichever side dies, the other notices: the helper reads EOF on a
// lifeline pipe when the command ends (closed on purpose, or by the kernel
// after a SIGKILL), then unmounts the driver (which writes all it holds),
// its raw mount, closes the volume and exits; the command sees the helper
// exit (it is its child) and fails. As root the helper runs in a mount
// namespace of its own: nobody else sees the two mounts, and the command
// reaches the files through /proc/HELPER/root.

// RawServeRequest is what the command hands the helper on its secret pipe.
type RawServeRequest struct {
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

// RawHelper is the command's handle on a running helper.
type RawHelper struct {
	child    *Child
	lifeline *os.File
	info     rawServeInfo
}

// StartRawHelper starts the helper (argv: the program and its hidden
// subcommand, which calls ServeRaw) on v, which stays open here, unused,
// until the helper has exited; it returns once the driver's mount is up.
// req says what to serve (its Snapshot is filled in here); the helper's
// messages go to msgs.
func StartRawHelper(ctx context.Context, argv []string, msgs io.Writer, v *volume.Volume, req RawServeRequest) (*RawHelper, error) {
	f := v.File()
	if f == nil {
		return nil, fail(KindUnservable, fmt.Errorf("%s goes through a helper process, which needs the volume on a file: %w", DriverName(req.FSType), volume.ErrNoSnapshot))
	}
	snap, err := v.Snapshot()
	if err != nil {
		return nil, fail(KindUnservable, fmt.Errorf("%s goes through a helper process that reopens the volume: %w", DriverName(req.FSType), err))
	}
	b, err := snap.MarshalBinary()
	snap.Wipe()
	if err != nil {
		return nil, err
	}
	req.Snapshot = b
	secret, err := json.Marshal(req)
	clear(b)
	if err != nil {
		return nil, err
	}
	defer clear(secret)
	lr, lw, err := Lifeline()
	if err != nil {
		return nil, err
	}
	c, err := StartChild(ctx, argv, secret, msgs, ChildOptions{Files: []*os.File{f, lr}, PrivateMounts: req.MountPoint == ""})
	lr.Close()
	if err != nil {
		lw.Close()
		if cf, ok := childFailure(err); ok {
			return nil, cf
		}
		return nil, fail(KindIO, err)
	}
	h := &RawHelper{child: c, lifeline: lw}
	if err := c.Info(&h.info); err != nil {
		h.Finish()
		return nil, fail(KindIO, fmt.Errorf("the raw file's helper process: %w", err))
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

// FilesDir is where the command reaches the driver's files.
func (h *RawHelper) FilesDir() string {
	if h.info.Private {
		return fmt.Sprintf("/proc/%d/root%s", h.child.PID(), h.info.Files)
	}
	return h.info.Files
}

// RawFile is the raw file the driver runs on.
func (h *RawHelper) RawFile() string { return h.info.Raw }

// Done is closed when the helper has exited.
func (h *RawHelper) Done() <-chan struct{} { return h.child.Done() }

// Finish ends the helper: the lifeline closes, the helper unmounts the
// driver (which writes everything into the raw file first), its raw mount
// and the volume, and exits. It returns the helper's error.
func (h *RawHelper) Finish() error {
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
			if _, ok := IsMountPoint(d); ok && !h.info.Private {
				Unmount(d, true)
			}
		}
		if strings.HasPrefix(h.info.Files, h.info.Dir+"/") {
			os.Remove(h.info.Files) // not a mount point of the user's
		}
		os.Remove(filepath.Join(h.info.Dir, "raw"))
		os.Remove(h.info.Dir)
	}
	if err != nil {
		var de *DaemonError
		if errors.As(err, &de) {
			if rest, ok := strings.CutPrefix(de.Msg, volume.ErrProtected.Error()); ok {
				return &Failure{Kind: KindChild, Code: de.Code, Err: fmt.Errorf("%w%s", volume.ErrProtected, rest)}
			}
			cf, _ := childFailure(err)
			return cf
		}
		return fail(KindIO, fmt.Errorf("the process serving the raw file (PID %d) ended: %v; what the driver held may be lost", h.child.PID(), err))
	}
	return nil
}

// killDriver kills the helper's driver if it is still running: checked by
// its command line, which names the private directory, so a reused PID is
// left alone.
func (h *RawHelper) killDriver() {
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
