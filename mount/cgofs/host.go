//go:build windows || (linux && cgofuse)

package cgofs

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/winfsp/cgofuse/fuse"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Mounted is a filesystem mounted through cgofuse.
type Mounted struct {
	host *fuse.FileSystemHost
	fs   *FS
	done chan struct{}
	ok   bool // what host.Mount returned, valid once done is closed

	once sync.Once
	err  error
}

// ready is an FS that reports its Init: cgofuse calls it once the FUSE
// layer is serving (after the kernel's INIT on Linux, once WinFsp has
// made the volume on Windows).
type ready struct {
	*FS
	init chan struct{}
}

func (r ready) Init() { close(r.init) }

// Mount serves fsys at dir (on Windows a drive letter such as "X:", or a
// directory that does not exist yet) and returns once the mount is up.
// Unmount, or Wait after the system unmounted it, closes fsys.
func Mount(dir string, fsys filesystem.FS, o Options) (*Mounted, error) {
	if err := Available(); err != nil {
		return nil, err
	}
	a := New(fsys, o)
	r := ready{FS: a, init: make(chan struct{})}
	host := fuse.NewFileSystemHost(r)
	host.SetCapCaseInsensitive(a.folds)
	// Readdir gives each entry's attributes: WinFsp then lists a folder
	// without a Getattr per file.
	host.SetCapReaddirPlus(true)
	m := &Mounted{host: host, fs: a, done: make(chan struct{})}
	opts := mountOptions(o, a)
	go func() {
		defer close(m.done)
		m.ok = host.Mount(dir, opts)
	}()
	select {
	case <-r.init:
		return m, nil
	case <-m.done:
		a.Close()
		return nil, fmt.Errorf("mounting at %s through %s failed (the FUSE layer's message, if any, is on stderr)", dir, Layer())
	case <-time.After(30 * time.Second):
		host.Unmount()
		<-m.done
		a.Close()
		return nil, fmt.Errorf("mounting at %s through %s: not ready after 30 s", dir, Layer())
	}
}

// mountOptions are the FUSE command-line options for o.
func mountOptions(o Options, a *FS) []string {
	var opts []string
	name := strings.NewReplacer(",", "_", "\\", "_").Replace(o.FsName)
	if name == "" {
		name = "cryptvol"
	}
	if runtime.GOOS == "windows" {
		// uid=-1 and gid=-1: the files are the mounting user's; the
		// volume label Explorer shows is the volume's name.
		opts = append(opts, "-o", "uid=-1,gid=-1", "-o", "volname="+name, "-o", "FileSystemName=cryptvol")
	} else {
		// No hard_remove: libfuse 3 has none on its command line (it is
		// set in the init callback's configuration, which cgofuse does
		// not expose), and with it libfuse 2 forgets the path of an open
		// file that is removed and fails its reads with ENOENT before
		// they reach the adapter (cgofuse sets no nullpath_ok). So an
		// open file that is removed is renamed to .fuse_hidden* until
		// it is closed; WinFsp has no such thing (Windows deletes on
		// the last close).
		opts = append(opts, "-o", "fsname="+name+",subtype=cryptvol")
	}
	if o.ReadOnly || a.w == nil {
		opts = append(opts, "-o", "ro")
	}
	if o.Debug {
		opts = append(opts, "-d")
	}
	return opts
}

// owner is the uid and gid every file is shown with.
func owner(o Options) (uint32, uint32) {
	uid, gid := os.Getuid(), os.Getgid()
	if o.UID > 0 {
		uid = o.UID
	}
	if o.GID > 0 {
		gid = o.GID
	}
	// Windows has no uid (-1): WinFsp maps -1 to the mounting user.
	return uint32(uid), uint32(gid)
}

// Unmount unmounts and closes the filesystem (committing open files).
func (m *Mounted) Unmount() error {
	m.once.Do(func() {
		select {
		case <-m.done:
		default:
			m.host.Unmount()
		}
		select {
		case <-m.done:
		case <-time.After(30 * time.Second):
			m.err = errors.New("the FUSE layer did not stop within 30 s after unmounting")
		}
		if err := m.fs.Close(); err != nil && m.err == nil {
			m.err = err
		}
	})
	return m.err
}

// Wait waits until the mount ends (unmounted by the system or by
// Unmount), then closes the filesystem.
func (m *Mounted) Wait() error {
	<-m.done
	return m.Unmount()
}

// Done is closed when the FUSE layer has stopped serving.
func (m *Mounted) Done() <-chan struct{} { return m.done }
