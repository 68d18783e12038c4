//go:build linux || darwin

package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Mount is one served FUSE mount.
type Mount struct {
	dir    string
	server *fuse.Server
	opts   Options
	// stop flushes the front end and makes every later request fail; it
	// runs once, when the server ends or on Shutdown.
	stop     func() error
	stopOnce sync.Once
	stopErr  error
	done     chan struct{} // closed when the serve loop has ended
	// opens counts open handles of a raw mount's file (nil otherwise).
	opens func() int
}

// OpenCount is the number of open handles on a raw mount's volume file (a
// loop device holds one); 0 for a files mount.
func (m *Mount) OpenCount() int {
	if m.opens == nil {
		return 0
	}
	return m.opens()
}

// Dir is the mount point.
func (m *Mount) Dir() string { return m.dir }

// attrTimeout is how long the kernel may cache attributes and names. The
// mount is the only writer of the volume while it is mounted, so the
// kernel's copies can only go stale through the mount itself, which the
// kernel sees; one second bounds the damage of anything unforeseen.
const attrTimeout = time.Second

func serve(dir string, root fs.InodeEmbedder, o Options, stop func() error) (*Mount, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = discard
	}
	timeout := attrTimeout
	fo := &fs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		Logger:       o.Logger,
		MountOptions: mountOptions(o),
	}
	server, err := fs.Mount(abs, root, fo)
	if err != nil {
		return nil, fmt.Errorf("mounting on %s: %w", abs, err)
	}
	closeFUSEOnExec()
	tuneReadAhead(abs)
	m := &Mount{dir: abs, server: server, opts: o, stop: stop, done: make(chan struct{})}
	go func() {
		server.Wait()
		close(m.done)
	}()
	return m, nil
}

// mountOptions are the FUSE options every mount uses.
func mountOptions(o Options) fuse.MountOptions {
	mo := fuse.MountOptions{
		FsName: o.FsName,
		Name:   "cryptvol",
		// Large requests: a 1 MiB write(2) reaches the sector layer as one
		// 1 MiB call, which it spreads over all cores.
		MaxWrite:     MaxIO,
		MaxReadAhead: MaxIO,
		// The kernel checks permissions from the modes we report.
		Options: []string{"default_permissions"},
		// Replies are in memory (decrypted data): writev them to the
		// kernel. Splicing would only add a copy through a pipe (and a
		// pipe holds no 1 MiB reply).
		DisableSplice: true,
		// FAT has no extended attributes. Answering ENOSYS once stops
		// the kernel asking for security.capability before every write.
		DisableXAttrs:        true,
		IgnoreSecurityLabels: true,
		AllowOther:           o.AllowOther,
		Debug:                o.Debug,
		Logger:               o.Logger,
		// As root, mount(2) directly: no fusermount3 needed.
		DirectMount: os.Geteuid() == 0,
	}
	if o.ReadOnly {
		mo.Options = append(mo.Options, "ro")
		mo.DirectMountFlags = readOnlyMountFlags()
	}
	if o.AllowRoot && os.Geteuid() != 0 {
		// The kernel knows only allow_other (libfuse's allow_root is a
		// check in the library); with default_permissions, a raw mount's
		// 0700 directory and 0600 file keep everyone but the user and
		// root out all the same.
		mo.AllowOther = true
	}
	return mo
}

// Wait blocks until the mount is gone (unmounted by Unmount, `cryptvol
// unmount`, fusermount3 -u or umount), then flushes the filesystem and
// returns the flush's error. The volume itself stays open: closing it is
// the caller's job.
func (m *Mount) Wait() error {
	<-m.done
	return m.flushAndStop()
}

// Done is closed when the mount is gone.
func (m *Mount) Done() <-chan struct{} { return m.done }

func (m *Mount) flushAndStop() error {
	m.stopOnce.Do(func() { m.stopErr = m.stop() })
	return m.stopErr
}

// Unmount unmounts politely: it fails with ErrBusy while files in the
// mount are open, and otherwise returns once everything is flushed.
func (m *Mount) Unmount() error {
	select {
	case <-m.done:
		return m.flushAndStop()
	default:
	}
	if err := Unmount(m.dir, false); err != nil {
		return err
	}
	return m.Wait()
}

// Shutdown ends the mount even if it is busy, as on SIGTERM: it unmounts if
// it can; otherwise it flushes everything (open files are committed as they
// are), makes every later request fail with EIO, and detaches the mount
// point (programs still holding files in it get errors). It returns once
// all data is in the container.
func (m *Mount) Shutdown() error {
	err := m.Unmount()
	if err == nil {
		return nil
	}
	select {
	case <-m.done:
		return err
	default:
	}
	m.opts.logf("unmounting %s failed (%v): flushing and detaching it", m.dir, err)
	ferr := m.flushAndStop()
	if derr := Unmount(m.dir, true); derr != nil {
		m.opts.logf("detaching %s: %v", m.dir, derr)
	}
	return ferr
}
