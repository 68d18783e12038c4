// Package atomicfile writes files so that nothing half-written, and no
// secret, is left behind: the data goes to a temporary file in the
// destination's own directory, created with O_EXCL (a planted file or
// symbolic link is never followed or reused) and readable by its owner
// only, and is renamed over the destination only when complete and synced.
// Every other way out removes it: Discard on error paths, and the next run
// for a process that was killed (kill -9 cannot be caught).
//
// For that, a temporary file's name says who owns it:
//
//	.BASE.cryptvol-PID-START-RANDOM.tmp
//
// PID is the owner's process id and START its start time (on Linux; 0
// elsewhere), so a reused PID is not mistaken for the owner; RANDOM makes
// the name unguessable. The owner also holds an advisory lock on the file
// while it lives. Sweep, which Create runs on the destination's directory,
// removes the temporary files whose owner is gone, never one a running
// process holds, and reports what it cannot decide.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sync"
)

// Options choose the new file's mode and where leftovers are reported.
type Options struct {
	// Perm is the mode of a new file; 0 means 0600. It is set explicitly
	// (the umask does not change it).
	Perm fs.FileMode
	// KeepMode: when the destination exists as a regular file, the new
	// file takes its permission bits (and, where the process may set
	// them, its owner and group) instead of Perm.
	KeepMode bool
	// Leftover, if set, hears about each leftover of an interrupted run
	// that Create's sweep of the directory found: removed, or left alone
	// with the reason.
	Leftover func(Leftover)
	// NoSync skips the fsyncs of Rename: for tests and throw-away files
	// only, as a crash may then leave an empty or partial destination.
	NoSync bool
	// NoDirSync skips only the directory's fsync after the rename, for a
	// writer of many files that calls SyncDir once at the end: a crash
	// before that may lose renames, never leave a partial file.
	NoDirSync bool
	// Trace, if set, hears each step that makes the file the
	// destination, after it is done: "sync" (the file's data), "rename"
	// and "syncdir" (the directory's). The power-cut explorers of its
	// users (issue 31) log them beside the file's writes.
	Trace func(step string)
}

// File is a temporary file that becomes the destination on Commit. Until
// then the destination is untouched.
type File struct {
	*os.File
	root      *os.Root
	ownRoot   bool
	tmp, dest string // names relative to root
	perm      fs.FileMode
	noSync    bool
	noDirSync bool
	trace     func(step string)
	owner     *owner // of the file replaced, kept where possible
	unlock    func()
	renamed   bool
	closed    bool
}

type owner struct{ uid, gid int }

// Create starts writing the file path: it sweeps leftovers of killed runs
// from path's directory, then creates the temporary file beside path.
func Create(path string, o Options) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." {
		return nil, fmt.Errorf("%s: not a file name", path)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	f, err := create(root, base, o)
	if err != nil {
		root.Close()
		return nil, err
	}
	f.ownRoot = true
	return f, nil
}

// CreateIn is Create for the file name (slash-separated, relative) inside
// root: nothing outside root is read or written.
func CreateIn(root *os.Root, name string, o Options) (*File, error) {
	return create(root, filepath.FromSlash(name), o)
}

func create(root *os.Root, dest string, o Options) (*File, error) {
	dir := filepath.Dir(dest)
	if firstVisit(root, dir) {
		for _, l := range sweep(root, dir) {
			if o.Leftover != nil {
				o.Leftover(l)
			}
		}
	}
	f := &File{root: root, dest: dest, perm: o.Perm, noSync: o.NoSync, noDirSync: o.NoDirSync, trace: o.Trace}
	if f.perm == 0 {
		f.perm = 0o600
	}
	if o.KeepMode {
		if st, err := root.Lstat(dest); err == nil && st.Mode().IsRegular() {
			f.perm = st.Mode().Perm() | st.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)
			f.owner = fileOwner(st)
		}
	}
	base := filepath.Base(dest)
	for try := 0; ; try++ {
		f.tmp = filepath.Join(dir, tempName(base))
		// O_EXCL: a name that exists (a planted file or symbolic link)
		// fails instead of being opened; 0600 until Commit sets the
		// final mode, so a partial file is never readable by others.
		tf, err := root.OpenFile(f.tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10 {
			continue
		}
		if err != nil {
			return nil, err
		}
		f.File = tf
		break
	}
	unlock, err := lockFile(f.File)
	if err != nil {
		f.Discard()
		return nil, err
	}
	f.unlock = unlock
	// The umask may have taken bits away from 0600; the mode is ours.
	if err := f.File.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) && runtime.GOOS != "windows" {
		f.Discard()
		return nil, err
	}
	return f, nil
}

// swept holds the directories this process has swept: once is enough (a
// leftover is a killed process's, and that was before this one looked),
// and copying a thousand files into one directory must not read it a
// thousand times.
var swept sync.Map

func firstVisit(root *os.Root, dir string) bool {
	key := filepath.Join(root.Name(), dir)
	if abs, err := filepath.Abs(key); err == nil {
		key = abs
	}
	_, seen := swept.LoadOrStore(key, true)
	return !seen
}

// TempName is the temporary file's name relative to its root: the
// destination's directory for Create, the root given to CreateIn.
func (f *File) TempName() string { return f.tmp }

// Path is the temporary file's path, for opening it again.
func (f *File) Path() string { return filepath.Join(f.root.Name(), f.tmp) }

// Rename makes the temporary file the destination: it syncs the data, sets
// the final mode (and owner), renames it over the destination and syncs
// the directory. The file stays open (except on Windows, which renames no
// open file: there it is closed first, as by CloseAndRename). After
// Rename, Discard only closes. An error with Renamed true means only the
// directory sync failed.
func (f *File) Rename() error {
	if runtime.GOOS == "windows" {
		return f.CloseAndRename()
	}
	if f.renamed || f.closed {
		return fs.ErrClosed
	}
	if err := f.sync(); err != nil {
		return err
	}
	if f.owner != nil {
		// Only a privileged process may give a file away; otherwise the
		// new file is the caller's, as a copy would be.
		f.File.Chown(f.owner.uid, f.owner.gid)
	}
	if err := f.File.Chmod(f.perm); err != nil {
		return err
	}
	return f.rename()
}

// CloseAndRename is Rename with the file closed first (its lock released),
// for systems that rename no open file.
func (f *File) CloseAndRename() error {
	if f.renamed || f.closed {
		return fs.ErrClosed
	}
	if err := f.sync(); err != nil {
		return err
	}
	if err := f.closeFile(); err != nil {
		return err
	}
	if f.owner != nil {
		f.root.Chown(f.tmp, f.owner.uid, f.owner.gid)
	}
	if err := f.root.Chmod(f.tmp, f.perm); err != nil && runtime.GOOS != "windows" {
		return err
	}
	return f.rename()
}

func (f *File) sync() error {
	if f.noSync {
		return nil
	}
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.traced("sync")
	return nil
}

func (f *File) rename() error {
	if err := f.root.Rename(f.tmp, f.dest); err != nil {
		return err
	}
	f.renamed = true
	f.traced("rename")
	if f.noSync || f.noDirSync {
		return nil
	}
	if err := syncDir(f.root, filepath.Dir(f.dest)); err != nil {
		return err
	}
	f.traced("syncdir")
	return nil
}

func (f *File) traced(step string) {
	if f.trace != nil {
		f.trace(step)
	}
}

// SyncDir makes the renames into directory dir durable (see NoDirSync).
func SyncDir(dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return syncDir(root, ".")
}

// Renamed reports whether the file has become the destination.
func (f *File) Renamed() bool { return f.renamed }

// Commit renames the complete file over the destination and closes it.
func (f *File) Commit() error {
	if err := f.Rename(); err != nil {
		f.Discard()
		return err
	}
	return f.Discard()
}

// Release hands the open file over to the caller after Rename: Discard
// then leaves it open (its lock too: the caller closes it).
func (f *File) Release() *os.File {
	of := f.File
	f.closed = true
	f.unlock = nil
	if f.ownRoot {
		f.root.Close()
		f.ownRoot = false
	}
	return of
}

// Discard closes the file and, unless it was renamed into place, removes
// it. It may be called any number of times, also after Commit: defer it
// right after Create.
func (f *File) Discard() error {
	err := f.closeFile()
	if !f.renamed && f.tmp != "" {
		if rerr := f.root.Remove(f.tmp); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = rerr
		}
		f.tmp = ""
	}
	if f.ownRoot {
		f.root.Close()
		f.ownRoot = false
	}
	return err
}

func (f *File) closeFile() error {
	if f.closed || f.File == nil {
		return nil
	}
	f.closed = true
	if f.unlock != nil {
		f.unlock()
		f.unlock = nil
	}
	return f.File.Close()
}

// Write writes the file path through a temporary file filled by fill, and
// renames it into place only if fill succeeds.
func Write(path string, o Options, fill func(w io.Writer) error) error {
	f, err := Create(path, o)
	if err != nil {
		return err
	}
	defer f.Discard()
	if err := fill(f.File); err != nil {
		return err
	}
	return f.Commit()
}

// syncDir makes a rename durable. Some systems cannot sync a directory
// (Windows refuses; NTFS journals the entry itself): the entry is then as
// durable as they make it.
func syncDir(root *os.Root, dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := root.Open(path.Clean(filepath.ToSlash(dir)))
	if err != nil {
		return nil
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !ignorableSyncError(err) {
		return err
	}
	return nil
}
