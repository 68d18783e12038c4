package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// writeTree is what put, rm, mkdir and mv do to a filesystem: FAT, exFAT
// and ext2/3/4 through an fsops.Tree over their filesystem.Writer, NTFS
// through ntfs-3g stacked on a private raw mount of the volume. Paths are
// the volume's, starting with "/".
type writeTree interface {
	// Type is the filesystem's name ("vfat", "exfat", "ext4", "ntfs").
	Type() string
	Stat(name string) (fs.FileInfo, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Mkdir(name string) error
	MkdirAll(name string) error
	Remove(name string) error
	RemoveAll(name string) error
	// Rename replaces an existing file at newpath.
	Rename(oldpath, newpath string) error
	Chtimes(name string, atime, mtime time.Time) error
	// Symlink makes name a symbolic link to target (ErrUnsupported on
	// FAT and exFAT, which have none).
	Symlink(target, name string) error
	// CreateExcl creates a new file (failing if the name exists).
	CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error)
	// Statfs is the space before the command (block size, available).
	Statfs() filesystem.Statfs
}

// What some filesystems have and others not (fsops.Tree answers for the
// in-process ones).
type (
	symlinkHolder   interface{ HasSymlinks() bool }
	attributeKeeper interface {
		Protected(fi fs.FileInfo) bool
		KeepMetadata(old, replacement string) error
	}
)

// hasSymlinks: put copies links as links where the filesystem has them
// (ext2/3/4; NTFS through ntfs-3g).
func hasSymlinks(t writeTree) bool {
	if h, ok := t.(symlinkHolder); ok {
		return h.HasSymlinks()
	}
	return true
}

// isProtected: a file marked read-only on FAT or exFAT is not replaced.
func isProtected(t writeTree, fi fs.FileInfo) bool {
	k, ok := t.(attributeKeeper)
	return ok && k.Protected(fi)
}

// keepMetadata gives a replacement the attributes and creation time of
// the file it replaces, where the filesystem has them.
func keepMetadata(t writeTree, old, replacement string) error {
	if k, ok := t.(attributeKeeper); ok {
		return k.KeepMetadata(old, replacement)
	}
	return nil
}

// fsName is a filesystem type as people write it.
func fsName(fstype string) string {
	switch fstype {
	case "vfat":
		return "FAT"
	case "exfat":
		return "exFAT"
	case "ntfs":
		return "NTFS"
	}
	return fstype
}

// openWrite unlocks the volume for writing (its lock held until done) and
// opens the filesystem inside: FAT (also for a volume with no filesystem
// recognised, which openFATTree explains), exFAT and ext2/3/4 in process
// through filesystem.Writer, NTFS with ntfs-3g stacked on a raw mount.
// done closes everything; for a driver tree it unmounts the driver (which
// writes all it holds) before the raw mount.
func openWrite(ctx context.Context, a *app, fl *pflag.FlagSet, cf *credFlags, volArg string) (writeTree, func() error, error) {
	v, err := openVolume(ctx, a, fl, cf, volArg, false)
	if err != nil {
		return nil, nil, err
	}
	r, perr := fsprobe.Probe(v)
	switch {
	case perr == nil && r.Type == "exfat":
		return openExFATTree(a, v, volArg)
	case perr == nil && isInProcessType(r.Type):
		return openExt4Tree(a, v, r.Type)
	case perr == nil && mount.DriverName(r.Type) != "":
		return openDriverTree(ctx, a, v, r.Type, volArg)
	}
	return openFATTree(a, v, volArg)
}

// closeTree closes what openWrite opened and returns err, or else the
// close's error, with the CLI's exit codes; volArg names the volume in
// the advice given with them.
func closeTree(done func() error, err error, volArg string) error {
	switch cerr := done(); {
	case err == nil:
		err = cerr
	case errors.Is(cerr, volume.ErrProtected) && !errors.Is(err, volume.ErrProtected):
		// A driver's EPERM was hidden-volume protection: say so.
		err = fmt.Errorf("%v: %w", err, cerr)
	}
	return fsErrorIn(volArg, err)
}

// driverTree is a writeTree on the mount point of a stacked driver,
// reached through an os.Root so that no name (nor a link in the volume)
// leads outside it. Until the first change it reads through the
// in-process reader and mounts nothing, so a command refused by its
// checks (a file that exists, too little space, a missing name) leaves
// the volume as it was, superblock and all.
type driverTree struct {
	typ   string
	ro    filesystem.FS // before the mount
	root  *os.Root      // after it
	space filesystem.Statfs
	mount func() (*os.Root, error)
	err   error // of the mount, once tried
}

// openDriverTree opens v's filesystem for reading; the first change
// serves v's raw data area in a private directory, stacks the
// filesystem's driver on it in another, and goes on through that.
func openDriverTree(ctx context.Context, a *app, v *volume.Volume, fstype, volArg string) (writeTree, func() error, error) {
	fail := func(err error) (writeTree, func() error, error) {
		v.Close()
		return nil, nil, err
	}
	ro, err := filesystem.OpenAs(fstype, v, v.Size(), filesystem.Options{})
	if err != nil {
		return fail(fsError(err))
	}
	// Refused before anything is read further: no driver, no FUSE.
	allowRoot, err := mount.DriverNeedsAllowRoot(fstype)
	if err == nil {
		if aerr := mount.Available(); aerr != nil {
			err = withCode(exitIO, fmt.Errorf("writing %s goes through %s, which needs FUSE: %w", fstype, mount.DriverName(fstype), aerr))
		}
	} else {
		err = withCode(exitDamaged, err)
	}
	if err != nil {
		ro.Close()
		return fail(err)
	}
	t := &driverTree{typ: fstype, ro: ro, space: ro.Statfs()}
	var helper *rawHelper
	t.mount = func() (*os.Root, error) {
		t.ro.Close()
		t.ro = nil
		var err error
		// What a killed command left would block this one (issue 25).
		mount.CleanPrivateMounts(os.TempDir())
		// The raw file is served by a helper process, so that this one
		// is only a client of the driver (see rawserve.go): no process
		// is both the server of a file and a client of a mount on it.
		container, _ := filepath.Abs(volArg)
		helper, err = startRawHelper(ctx, a.stderr, v, rawServeSecret{FSType: fstype, Container: container, AllowRoot: allowRoot})
		if err != nil {
			return nil, err
		}
		root, err := os.OpenRoot(helper.filesDir())
		if err != nil {
			return nil, withCode(exitIO, err)
		}
		return root, nil
	}
	done := func() error {
		var err error
		if t.ro != nil {
			t.ro.Close()
		}
		if t.root != nil {
			t.root.Close()
		}
		// The driver writes everything it holds into the raw file and
		// exits; only then may the raw mount (and the volume) go.
		if helper != nil {
			err = helper.finish()
		}
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return t, done, nil
}

// writable mounts the driver on the first change.
func (t *driverTree) writable() error {
	if t.root == nil && t.err == nil {
		t.root, t.err = t.mount()
	}
	return t.err
}

// rel is name inside the root.
func rel(name string) string {
	p := strings.TrimPrefix(path.Clean("/"+name), "/")
	if p == "" {
		return "."
	}
	return p
}

// volErr names the volume's path in an error of the root.
func volErr(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: volPath(name), Err: pe.Err}
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return &os.LinkError{Op: le.Op, Old: volPath(le.Old), New: volPath(le.New), Err: le.Err}
	}
	return err
}

func (t *driverTree) Type() string { return t.typ }

func (t *driverTree) Stat(name string) (fs.FileInfo, error) {
	if t.root == nil && t.ro == nil {
		return nil, t.err // the mount failed: the reader is closed too
	}
	if t.root == nil {
		return t.ro.Lstat(name)
	}
	fi, err := t.root.Lstat(rel(name))
	return fi, volErr(name, err)
}

func (t *driverTree) ReadDir(name string) ([]fs.DirEntry, error) {
	if t.root == nil && t.ro == nil {
		return nil, t.err
	}
	if t.root == nil {
		return t.ro.ReadDir(name)
	}
	d, err := t.root.Open(rel(name))
	if err != nil {
		return nil, volErr(name, err)
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	return ents, volErr(name, err)
}

// change runs op on the root once the driver is mounted.
func (t *driverTree) change(name string, op func(r *os.Root, p string) error) error {
	if err := t.writable(); err != nil {
		return err
	}
	return volErr(name, op(t.root, rel(name)))
}

func (t *driverTree) Mkdir(name string) error {
	return t.change(name, func(r *os.Root, p string) error { return r.Mkdir(p, 0o755) })
}

func (t *driverTree) MkdirAll(name string) error {
	return t.change(name, func(r *os.Root, p string) error { return r.MkdirAll(p, 0o755) })
}

func (t *driverTree) Remove(name string) error { return t.change(name, (*os.Root).Remove) }

func (t *driverTree) RemoveAll(name string) error { return t.change(name, (*os.Root).RemoveAll) }

func (t *driverTree) Rename(oldpath, newpath string) error {
	return t.change(oldpath, func(r *os.Root, p string) error { return r.Rename(p, rel(newpath)) })
}

func (t *driverTree) Chtimes(name string, atime, mtime time.Time) error {
	return t.change(name, func(r *os.Root, p string) error { return r.Chtimes(p, atime, mtime) })
}

func (t *driverTree) Symlink(target, name string) error {
	return t.change(name, func(r *os.Root, p string) error { return r.Symlink(target, p) })
}

func (t *driverTree) CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error) {
	var f *os.File
	err := t.change(name, func(r *os.Root, p string) error {
		var err error
		f, err = r.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (t *driverTree) Statfs() filesystem.Statfs { return t.space }
