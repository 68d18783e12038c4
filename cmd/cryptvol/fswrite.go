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

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// writeTree is what put, rm, mkdir and mv do to a filesystem other than
// FAT: exFAT through package exfat, ext2/3/4 and NTFS through their own
// user-space driver (fuse2fs, ntfs-3g) stacked on a private raw mount of
// the volume. Paths are the volume's, starting with "/".
type writeTree interface {
	// Type is the filesystem's name ("exfat", "ext4", "ntfs").
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
	// CreateExcl creates a new file (failing if the name exists).
	CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error)
	// Statfs is the space before the command (block size, available).
	Statfs() filesystem.Statfs
}

// openWrite unlocks the volume for writing (its lock held until done) and
// opens the filesystem inside: a *fat.FS for FAT (and for a volume with no
// filesystem recognised, which openFAT explains), a writeTree for exFAT,
// ext2/3/4 and NTFS. done closes everything; for a driver tree it unmounts
// the driver (which writes all it holds) before the raw mount.
func openWrite(ctx context.Context, a *app, fl *pflag.FlagSet, cf *credFlags, volArg string) (*fat.FS, writeTree, func() error, error) {
	v, err := openVolume(ctx, a, fl, cf, volArg, false)
	if err != nil {
		return nil, nil, nil, err
	}
	r, perr := fsprobe.Probe(v)
	switch {
	case perr == nil && r.Type == "exfat":
		t, done, err := openExFATTree(a, v, volArg)
		return nil, t, done, err
	case perr == nil && mount.DriverName(r.Type) != "":
		t, done, err := openDriverTree(ctx, a, v, r.Type, volArg)
		return nil, t, done, err
	}
	ffs, done, err := openFATOn(a, v, volArg, fatWrite)
	return ffs, nil, done, err
}

// closeTree closes what openWrite opened for a writeTree and returns err,
// or else the close's error, with the CLI's exit codes.
func closeTree(done func() error, err error) error {
	if cerr := done(); err == nil {
		err = cerr
	}
	return treeError(err)
}

// treeError maps the errors of a writeTree onto the CLI's exit codes.
func treeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, exfat.ErrCorrupt), errors.Is(err, filesystem.ErrCorrupt):
		return withCode(exitDamaged, err)
	case errors.Is(err, volume.ErrProtected), errors.Is(err, volume.ErrReadOnly):
		return withCode(exitDestroy, err)
	}
	return err
}

// exfatTree is a writeTree on package exfat.
type exfatTree struct{ *exfat.FS }

func openExFATTree(a *app, v *volume.Volume, volArg string) (writeTree, func() error, error) {
	x, err := exfat.Open(v, v.Size())
	if err != nil {
		v.Close()
		return nil, nil, withCode(exitDamaged, err)
	}
	if x.Dirty() {
		a.warnf("the exFAT filesystem was not closed cleanly (VolumeDirty is set): writing all the same; 'fsck.exfat' (exfatprogs) checks it")
	}
	done := func() error {
		err := x.Close()
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return exfatTree{x}, done, nil
}

func (t exfatTree) Type() string { return "exfat" }

func (t exfatTree) Stat(name string) (fs.FileInfo, error) {
	fi, err := t.FS.Stat(name)
	if err != nil {
		return nil, err
	}
	return fi, nil
}

func (t exfatTree) CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error) {
	return t.FS.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
}

func (t exfatTree) Statfs() filesystem.Statfs {
	s := t.FS.Statfs()
	return filesystem.Statfs{BlockSize: s.ClusterSize, TotalBytes: s.TotalBytes, FreeBytes: s.FreeBytes, AvailBytes: s.FreeBytes}
}

// driverTree is a writeTree on the mount point of a stacked driver,
// reached through an os.Root so that no name (nor a link in the volume)
// leads outside it.
type driverTree struct {
	typ   string
	root  *os.Root
	space filesystem.Statfs
}

// openDriverTree serves v's raw data area in a private directory, stacks
// the filesystem's driver on it in another, and opens that as a tree.
func openDriverTree(ctx context.Context, a *app, v *volume.Volume, fstype, volArg string) (writeTree, func() error, error) {
	fail := func(err error) (writeTree, func() error, error) {
		v.Close()
		return nil, nil, err
	}
	// The space as the filesystem records it, read before the driver
	// has it (for put's check that everything fits).
	var space filesystem.Statfs
	if r, err := filesystem.OpenAs(fstype, v, v.Size(), filesystem.Options{}); err == nil {
		space = r.Statfs()
		r.Close()
	}
	allowRoot, err := mount.DriverNeedsAllowRoot(fstype)
	if err != nil {
		return fail(withCode(exitDamaged, err))
	}
	if err := mount.Available(); err != nil {
		return fail(withCode(exitIO, fmt.Errorf("writing %s goes through %s, which needs FUSE: %w", fstype, mount.DriverName(fstype), err)))
	}
	tmp, err := os.MkdirTemp("", "cryptvol-write-")
	if err != nil {
		return fail(withCode(exitIO, err))
	}
	rawDir, filesDir := filepath.Join(tmp, "raw"), filepath.Join(tmp, "files")
	for _, d := range []string{rawDir, filesDir} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(tmp)
			return fail(withCode(exitIO, err))
		}
	}
	container, _ := filepath.Abs(volArg)
	m, err := mount.MountRaw(rawDir, v, mount.Options{FsName: container, Container: container, AllowRoot: allowRoot})
	if err != nil {
		os.RemoveAll(tmp)
		return fail(withCode(exitIO, err))
	}
	drv, err := mount.StartDriver(fstype, filepath.Join(rawDir, mount.RawFileName), filesDir, mount.DriverOptions{})
	if err != nil {
		m.Shutdown()
		os.RemoveAll(tmp)
		return fail(withCode(exitDamaged, err))
	}
	// Nobody else reaches the files while they change: the driver's
	// mount is the user's alone (no allow_other), in a private directory.
	root, err := os.OpenRoot(filesDir)
	done := func() error {
		if root != nil {
			root.Close()
		}
		// The driver writes everything it holds into the raw file and
		// exits; only then may the raw mount (and the volume) go.
		err := drv.Unmount(false, 5*time.Minute)
		if errors.Is(err, mount.ErrBusy) {
			err = drv.Unmount(true, 5*time.Minute)
		}
		if serr := m.Shutdown(); err == nil {
			err = serr
		}
		if cerr := v.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			os.RemoveAll(tmp) // two empty directories
		} else {
			err = fmt.Errorf("finishing the writes through %s: %w", drv.Name(), err)
		}
		return err
	}
	if err != nil {
		done()
		return nil, nil, withCode(exitIO, err)
	}
	return &driverTree{typ: fstype, root: root, space: space}, done, nil
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
	fi, err := t.root.Lstat(rel(name))
	return fi, volErr(name, err)
}

func (t *driverTree) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := t.root.Open(rel(name))
	if err != nil {
		return nil, volErr(name, err)
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	return ents, volErr(name, err)
}

func (t *driverTree) Mkdir(name string) error { return volErr(name, t.root.Mkdir(rel(name), 0o755)) }
func (t *driverTree) MkdirAll(name string) error {
	return volErr(name, t.root.MkdirAll(rel(name), 0o755))
}
func (t *driverTree) Remove(name string) error    { return volErr(name, t.root.Remove(rel(name))) }
func (t *driverTree) RemoveAll(name string) error { return volErr(name, t.root.RemoveAll(rel(name))) }
func (t *driverTree) Rename(oldpath, newpath string) error {
	return volErr(oldpath, t.root.Rename(rel(oldpath), rel(newpath)))
}
func (t *driverTree) Chtimes(name string, atime, mtime time.Time) error {
	return volErr(name, t.root.Chtimes(rel(name), atime, mtime))
}

func (t *driverTree) CreateExcl(name string, perm fs.FileMode) (io.WriteCloser, error) {
	f, err := t.root.OpenFile(rel(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, volErr(name, err)
	}
	return f, nil
}

func (t *driverTree) Statfs() filesystem.Statfs { return t.space }
