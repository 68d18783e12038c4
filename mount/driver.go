package mount

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// The filesystems cryptvol does not write itself (ext2/3/4, NTFS) are
// written by the field's own user-space drivers, which run without root
// on a regular file: fuse2fs (e2fsprogs) and ntfs-3g. A driver mount
// stacks one of them on the raw file of a MountRaw: the driver reads and
// writes DIR/volume, cryptvol encrypts, and the user sees the driver's
// mount point.

// ModeDriver names a mount whose files are served by a stacked driver.
const ModeDriver = "driver"

// ErrNoDriver means the driver a filesystem needs is not installed; the
// error says which package has it.
var ErrNoDriver = errors.New("filesystem driver not installed")

// driverSpec is how one driver is run.
type driverSpec struct {
	bin, pkg string
	// args are the command line (after the program name) that serves
	// image at dir in the foreground.
	args func(image, dir string, o DriverOptions) []string
}

var drivers = map[string]driverSpec{
	"ext2": fuse2fsSpec, "ext3": fuse2fsSpec, "ext4": fuse2fsSpec,
	"ntfs": {bin: "ntfs-3g", pkg: "ntfs-3g", args: ntfs3gArgs},
}

var fuse2fsSpec = driverSpec{bin: "fuse2fs", pkg: "fuse2fs", args: fuse2fsArgs}

// fuse2fsArgs: in the foreground; fakeroot lets the user who unlocked the
// volume write everywhere in it (files made by root on another machine
// included), as the kernel driver would let that machine's root.
func fuse2fsArgs(image, dir string, o DriverOptions) []string {
	opts := []string{"fakeroot"}
	if o.ReadOnly {
		opts = append(opts, "ro")
	}
	if o.AllowOther {
		opts = append(opts, "allow_other")
	}
	return []string{image, dir, "-f", "-o", strings.Join(opts, ",")}
}

// ntfs3gArgs: no_detach keeps it in the foreground. Without root, ntfs-3g
// mounts with allow_other and every file mode 0777 (NTFS has no Unix
// owners), so unless other users are meant to see the files, umask=077
// keeps them the user's alone.
func ntfs3gArgs(image, dir string, o DriverOptions) []string {
	opts := []string{"no_detach"}
	if o.ReadOnly {
		opts = append(opts, "ro")
	}
	if !o.AllowOther {
		opts = append(opts, "umask=077")
	}
	return []string{"-o", strings.Join(opts, ","), image, dir}
}

// DriverOptions tune StartDriver.
type DriverOptions struct {
	ReadOnly, AllowOther bool
	// Log receives the driver's own output (its stdout and stderr).
	Log io.Writer
	// Timeout bounds the wait for the mount to appear (default 30 s).
	Timeout time.Duration
}

// DriverName is the program that serves filesystem type fstype (a
// fsprobe/blkid name: "ext4", "ntfs", ...), or "" if there is none.
func DriverName(fstype string) string { return drivers[fstype].bin }

// FindDriver returns the path of the driver for fstype, or an error
// wrapping ErrNoDriver that names the Debian package to install.
func FindDriver(fstype string) (string, error) {
	spec, ok := drivers[fstype]
	if !ok {
		return "", fmt.Errorf("%w: no user-space driver is known for %s", ErrNoDriver, fstype)
	}
	if p, err := exec.LookPath(spec.bin); err == nil {
		return p, nil
	}
	// An ordinary user's PATH may leave out the sbin directories.
	for _, d := range []string{"/usr/sbin", "/sbin"} {
		if p := d + "/" + spec.bin; isExecutableFile(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: writing %s needs %s (install the %s package, e.g. apt-get install %s)", ErrNoDriver, fstype, spec.bin, spec.pkg, spec.pkg)
}

// ErrDriverSetuid means the driver is installed setuid root (as ntfs-3g
// must be on Debian for users to mount with it) while the user's FUSE
// mounts are closed to root: the driver, running as root, cannot open the
// raw file.
var ErrDriverSetuid = errors.New("the driver runs setuid root and cannot open a user's raw FUSE file")

// DriverNeedsAllowRoot reports whether the raw mount under the driver for
// fstype must let root in (Options.AllowRoot): the driver is setuid root
// and this process is not root. It returns an error wrapping
// ErrDriverSetuid when that is so but /etc/fuse.conf does not allow it
// (no user_allow_other).
func DriverNeedsAllowRoot(fstype string) (bool, error) {
	bin, err := FindDriver(fstype)
	if err != nil {
		return false, err
	}
	fi, err := os.Stat(bin)
	if err != nil || fi.Mode()&os.ModeSetuid == 0 || os.Geteuid() == 0 {
		return false, nil
	}
	if !userAllowOther() {
		return false, fmt.Errorf("%w: %s is installed setuid root (so that users can mount with it), and a user's FUSE mount is closed to root unless /etc/fuse.conf has the line user_allow_other; add it (cryptvol then lets only you and root reach the raw file, with allow_root), or mount as root", ErrDriverSetuid, bin)
	}
	return true, nil
}

// userAllowOther reports whether /etc/fuse.conf lets users mount with
// allow_other and allow_root.
func userAllowOther() bool {
	b, err := os.ReadFile("/etc/fuse.conf")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "user_allow_other" {
			return true
		}
	}
	return false
}

func isExecutableFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// Driver is a running filesystem driver serving an image at a directory.
type Driver struct {
	dir, name string
	cmd       *exec.Cmd
	out       *tailBuffer
	done      chan struct{}
	err       error // the process's exit, valid once done is closed
}

// StartDriver runs the driver for fstype on image (normally the raw file
// of a MountRaw) and mounts it at dir, returning once the mount is in the
// system's mount table. If the driver exits first or the mount does not
// appear in time, the error carries the driver's last words.
func StartDriver(fstype, image, dir string, o DriverOptions) (*Driver, error) {
	bin, err := FindDriver(fstype)
	if err != nil {
		return nil, err
	}
	if o.Timeout == 0 {
		o.Timeout = 30 * time.Second
	}
	spec := drivers[fstype]
	d := &Driver{dir: dir, name: spec.bin, out: &tailBuffer{max: 4 << 10}, done: make(chan struct{})}
	var w io.Writer = d.out
	if o.Log != nil {
		w = io.MultiWriter(d.out, o.Log)
	}
	d.cmd = exec.Command(bin, spec.args(image, dir, o)...)
	d.cmd.Stdout, d.cmd.Stderr = w, w
	// The driver must outlive a Ctrl-C sent to the terminal's process
	// group: cryptvol unmounts it in order, then the raw file.
	d.cmd.SysProcAttr = driverProcAttr(DetachedProcAttr())
	if err := d.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", spec.bin, err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	deadline := time.Now().Add(o.Timeout)
	for {
		if _, ok := IsMountPoint(dir); ok {
			return d, nil
		}
		select {
		case <-d.done:
			return nil, fmt.Errorf("%s could not mount the filesystem (%v): %s", spec.bin, d.err, d.out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.cmd.Process.Kill()
			<-d.done
			Unmount(dir, true)
			return nil, fmt.Errorf("%s did not mount the filesystem within %v: %s", spec.bin, o.Timeout, d.out.String())
		}
	}
}

// Name is the driver program's name ("fuse2fs", "ntfs-3g").
func (d *Driver) Name() string { return d.name }

// PID is the driver's process id.
func (d *Driver) PID() int { return d.cmd.Process.Pid }

// Done is closed when the driver has exited (after its filesystem was
// unmounted, by Unmount or by anyone else). A nil Driver's never is.
func (d *Driver) Done() <-chan struct{} {
	if d == nil {
		return nil
	}
	return d.done
}

// Wait waits for the driver to exit and returns why it did: nil when it
// finished cleanly (everything it accepted is written to its image).
func (d *Driver) Wait() error {
	<-d.done
	if d.err != nil {
		return fmt.Errorf("%s ended with %v: %s", d.name, d.err, d.out.String())
	}
	return nil
}

// Unmount unmounts the driver's filesystem (lazily: detaching it if busy
// when lazy) and waits for the driver to write everything and exit. A
// driver that does not exit within timeout is killed, and the error says
// so.
func (d *Driver) Unmount(lazy bool, timeout time.Duration) error {
	select {
	case <-d.done:
		// Already gone (unmounted by someone else, or crashed): its
		// mount point may be left dangling.
		if _, ok := IsMountPoint(d.dir); ok {
			Unmount(d.dir, true)
		}
		return d.Wait()
	default:
	}
	if err := Unmount(d.dir, lazy); err != nil && !errors.Is(err, ErrNotMounted) {
		return err
	}
	select {
	case <-d.done:
		return d.Wait()
	case <-time.After(timeout):
		d.cmd.Process.Kill()
		<-d.done
		return fmt.Errorf("%s did not finish within %v after unmounting and was killed: its last writes may be lost", d.name, timeout)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(bytes.ToValidUTF8(t.b, nil)))
	if s == "" {
		return "no output"
	}
	return strings.ReplaceAll(s, "\n", "; ")
}
