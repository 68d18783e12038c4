package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// GetOptions is how Get copies out.
type GetOptions struct {
	// Recursive copies a directory with everything in it.
	Recursive bool
	// Force replaces existing local files.
	Force bool
	// Umask takes permission bits off the files made, as for cp.
	Umask fs.FileMode
	// Copy copies one file's data (nil: a plain copy).
	Copy CopyFunc
	// Sync makes the files of a tree, written below root, durable at
	// once (nil: each is synced on its own).
	Sync func(root string, files []string) error
	// Leftover hears of the temporary files of killed runs swept away.
	Leftover func(atomicfile.Leftover)
	// Skipped hears of each device, fifo or socket left out of a tree.
	Skipped func(name string, mode fs.FileMode)
}

// getJob is one file or link (or, with info nil, one directory) to copy out.
type getJob struct {
	src, dest string
	info      fs.FileInfo
}

// Get copies src of fsys (st is its Stat) to the local path dest (into
// it, when dest is a directory and src a file): every destination is
// checked before anything is written, each file goes through a temporary
// file renamed when complete, with its modification time and the
// volume's permissions less the umask. A cancelled ctx stops it between
// or inside files, removes the partial one and says how far it got.
func Get(ctx context.Context, fsys filesystem.FS, src string, st fs.FileInfo, dest string, o GetOptions) error {
	if o.Copy == nil {
		o.Copy = plainCopy
	}
	var jobs []getJob
	tree := st.IsDir()
	if tree {
		if !o.Recursive {
			return kind(BadUsage, fmt.Errorf("%s is a directory (use -r)", src))
		}
		var err error
		if jobs, err = planGetTree(ctx, fsys, src, dest, &o); err != nil {
			return err
		}
	} else {
		if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
			dest = filepath.Join(dest, path.Base(src))
		}
		jobs = []getJob{{src: src, dest: dest, info: st}}
	}
	if !o.Force {
		for _, j := range jobs {
			if j.info == nil {
				continue
			}
			if _, err := os.Lstat(j.dest); err == nil {
				return kind(WouldDestroy, fmt.Errorf("%s exists (use --force to overwrite)", j.dest))
			}
		}
	}
	return getAll(ctx, fsys, jobs, tree && o.Sync != nil, dest, &o)
}

// planGetTree lists the directory src of the volume and everything under
// it as jobs writing below dest, directories before their contents.
// Devices, fifos and sockets are skipped (and told to o.Skipped).
func planGetTree(ctx context.Context, fsys filesystem.FS, src, dest string, o *GetOptions) ([]getJob, error) {
	jobs := []getJob{{src: src, dest: dest}}
	ents, err := fsys.ReadDir(src)
	if err != nil {
		return nil, kind(Failed, err)
	}
	for _, e := range ents {
		if ctx.Err() != nil {
			return nil, interrupted("nothing copied yet")
		}
		s := path.Join(src, e.Name())
		d := filepath.Join(dest, localName(e.Name()))
		switch t := e.Type(); {
		case t.IsDir():
			sub, err := planGetTree(ctx, fsys, s, d, o)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, sub...)
			continue
		case t&fs.ModeSymlink == 0 && !t.IsRegular():
			if o.Skipped != nil {
				o.Skipped(s, t)
			}
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, kind(Failed, err)
		}
		jobs = append(jobs, getJob{src: s, dest: d, info: fi})
	}
	return jobs, nil
}

// getAll copies the jobs out. A single file is synced before its rename;
// a tree (tree true) is synced once at the end, through o.Sync: an fsync
// per small file would cost more than the copy.
func getAll(ctx context.Context, fsys filesystem.FS, jobs []getJob, tree bool, root string, o *GetOptions) error {
	files, copied := 0, 0
	for _, j := range jobs {
		if j.info != nil {
			files++
		}
	}
	var written []string
	for _, j := range jobs {
		if ctx.Err() != nil {
			return interrupted("%d of %d files copied", copied, files)
		}
		switch {
		case j.info == nil:
			if err := os.MkdirAll(j.dest, 0o755); err != nil {
				return err
			}
			continue
		case j.info.Mode()&fs.ModeSymlink != 0:
			if err := getLink(fsys, j.src, j.dest); err != nil {
				return err
			}
			copied++
			continue
		}
		err := atomicfile.Write(j.dest, atomicfile.Options{Perm: newFileMode(j.info, o.Umask), KeepMode: true, NoSync: tree, Leftover: o.Leftover}, func(w io.Writer) error {
			return CopyOut(ctx, fsys, j.src, w, o.Copy)
		})
		if errors.Is(err, context.Canceled) {
			return interrupted("%d of %d files copied; %s partial, removed", copied, files, j.src)
		}
		if err != nil {
			return err
		}
		written = append(written, j.dest)
		if err := os.Chtimes(j.dest, j.info.ModTime(), j.info.ModTime()); err != nil {
			return err
		}
		copied++
	}
	if tree {
		return o.Sync(root, written)
	}
	return nil
}

// CopyOut copies the file src of fsys to w (copy nil: a plain copy).
func CopyOut(ctx context.Context, fsys filesystem.FS, src string, w io.Writer, copy CopyFunc) error {
	if copy == nil {
		copy = plainCopy
	}
	f, err := fsys.Open(src)
	if err != nil {
		return kind(Failed, err)
	}
	defer f.Close()
	_, err = copy(ctx, w, f, 0)
	return kind(Failed, err)
}

// getLink recreates a symbolic link as a link with the same target (as
// cp -r does); the target is not followed. An existing destination was
// refused before unless Force, so it is replaced here.
func getLink(fsys filesystem.FS, src, dest string) error {
	target, err := fsys.Readlink(src)
	if err != nil {
		return kind(Failed, err)
	}
	if _, err := os.Lstat(dest); err == nil {
		if err := os.Remove(dest); err != nil {
			return err
		}
	}
	return os.Symlink(filepath.FromSlash(target), dest)
}

// localName refuses names that would escape the destination directory.
func localName(n string) string {
	if n == ".." || n == "." || filepath.Base(n) != n {
		return "_" + filepath.Base(n)
	}
	return n
}

// newFileMode is the mode of a new local file, as cp makes it: the
// volume's permission bits without those the umask takes away (at least
// owner read and write, so the copy can be read back).
func newFileMode(fi fs.FileInfo, umask fs.FileMode) fs.FileMode {
	return (fi.Mode().Perm()&^umask | 0o600) & fs.ModePerm
}
