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

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

func init() {
	register(&command{
		name:    "get",
		summary: "copy files or directories out of a volume",
		usage: `Usage: cryptvol get VOLUME PATH [DEST|-] [-r] [--force] [credentials]

Copies the file PATH from the filesystem inside VOLUME (FAT, exFAT,
ext2/3/4 or NTFS) to DEST (default: its name in the current directory), or to standard
output with -. A directory needs -r and is copied with everything in it,
symbolic links as links. Existing local files are kept unless --force (every
destination is checked before anything is written); each file is written to
a temporary name and renamed when complete, with its modification time and
the volume's permissions less the umask (as cp makes them); a tree is
flushed to disk once, when all is copied. Ctrl-C stops between or inside
files, removes the partial one and says how far the copy got.

Example:
  cryptvol get secret.hc /notes.txt - --password-file pw.txt
  cryptvol get secret.hc /photos ./photos -r --password-file pw.txt
`,
		run: runGet,
	})
}

func runGet(ctx context.Context, a *app, args []string) error {
	c := commands["get"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	recursive := fl.BoolP("recursive", "r", false, "copy directories recursively")
	force := fl.Bool("force", false, "overwrite existing local files")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, 3); err != nil {
		return err
	}
	src := volPath(fl.Arg(1))
	dest := path.Base(src)
	if fl.NArg() == 3 {
		dest = fl.Arg(2)
	}
	fsys, done, err := openFS(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		return err
	}
	defer done()
	st, err := fsys.Stat(src)
	if err != nil {
		if _, lerr := fsys.Lstat(src); lerr != nil {
			return inVolume(fsError(err)) // PATH names nothing
		}
		return fsError(err) // a link that cannot be followed
	}
	if dest == "-" {
		if st.IsDir() {
			return usageError(fmt.Errorf("%s is a directory: cannot write it to standard output", src))
		}
		if err := copyOut(ctx, fsys, src, a.stdout); errors.Is(err, context.Canceled) {
			return interrupted("%s partly written to standard output", src)
		} else if err != nil {
			return err
		}
		return nil
	}
	var jobs []getJob
	tree := st.IsDir()
	if tree {
		if !*recursive {
			return usageError(fmt.Errorf("%s is a directory (use -r)", src))
		}
		if jobs, err = planGetTree(ctx, a, fsys, src, dest); err != nil {
			return err
		}
	} else {
		if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
			dest = filepath.Join(dest, path.Base(src))
		}
		jobs = []getJob{{src: src, dest: dest, info: st}}
	}
	// Every destination is checked before anything is written.
	if !*force {
		for _, j := range jobs {
			if j.info == nil {
				continue
			}
			if _, err := os.Lstat(j.dest); err == nil {
				return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", j.dest))
			}
		}
	}
	return getAll(ctx, a, fsys, jobs, tree, dest)
}

// getJob is one file or link (or, with info nil, one directory) to copy out.
type getJob struct {
	src, dest string
	info      fs.FileInfo
}

// planGetTree lists the directory src of the volume and everything under
// it as jobs writing below dest, directories before their contents.
// Devices, fifos and sockets are skipped with a warning.
func planGetTree(ctx context.Context, a *app, fsys filesystem.FS, src, dest string) ([]getJob, error) {
	jobs := []getJob{{src: src, dest: dest}}
	ents, err := fsys.ReadDir(src)
	if err != nil {
		return nil, fsError(err)
	}
	for _, e := range ents {
		if ctx.Err() != nil {
			return nil, interrupted("nothing copied yet")
		}
		s := path.Join(src, e.Name())
		d := filepath.Join(dest, localName(e.Name()))
		switch t := e.Type(); {
		case t.IsDir():
			sub, err := planGetTree(ctx, a, fsys, s, d)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, sub...)
			continue
		case t&fs.ModeSymlink == 0 && !t.IsRegular():
			fmt.Fprintf(a.stderr, "cryptvol get: skipping %s (%v)\n", s, t)
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, fsError(err)
		}
		jobs = append(jobs, getJob{src: s, dest: d, info: fi})
	}
	return jobs, nil
}

// getAll copies the jobs out, each file through a temporary file renamed
// when complete; an interrupt stops it between or inside files, removes
// the partial one and says how far it got. A single file is synced before
// its rename; a tree (tree true) is flushed once at the end, through
// syncFiles: an fsync per small file would cost more than the copy.
func getAll(ctx context.Context, a *app, fsys filesystem.FS, jobs []getJob, tree bool, root string) error {
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
		err := atomicfile.Write(j.dest, atomicfile.Options{Perm: newFileMode(j.info), KeepMode: true, NoSync: tree, Leftover: a.leftover}, func(w io.Writer) error {
			return copyOut(ctx, fsys, j.src, w)
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
		return syncFiles(root, written)
	}
	return nil
}

func copyOut(ctx context.Context, fsys filesystem.FS, src string, w io.Writer) error {
	f, err := fsys.Open(src)
	if err != nil {
		return fsError(err)
	}
	defer f.Close()
	_, err = copyCtx(ctx, w, f)
	return fsError(err)
}

// getLink recreates a symbolic link as a link with the same target (as
// cp -r does); the target is not followed. An existing destination was
// refused before unless --force, so it is replaced here.
func getLink(fsys filesystem.FS, src, dest string) error {
	target, err := fsys.Readlink(src)
	if err != nil {
		return fsError(err)
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
func newFileMode(fi fs.FileInfo) fs.FileMode {
	return (fi.Mode().Perm()&^umask() | 0o600) & fs.ModePerm
}
