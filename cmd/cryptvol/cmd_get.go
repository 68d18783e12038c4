package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/cryptvol/cryptvol/filesystem"
)

func init() {
	register(&command{
		name:    "get",
		summary: "copy files or directories out of a volume",
		usage: `Usage: cryptvol get VOLUME PATH [DEST|-] [-r] [--force] [credentials]

Copies the file PATH from the filesystem inside VOLUME (FAT, ext2/3/4 or
NTFS) to DEST (default: its name in the current directory), or to standard
output with -. A directory needs -r and is copied with everything in it,
symbolic links as links. Existing local files are kept unless --force; each
file is written to a temporary name and renamed when complete, with its
modification time; a tree is flushed to disk once, when all is copied.

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
		return fsError(err)
	}
	if dest == "-" {
		if st.IsDir() {
			return usageError(fmt.Errorf("%s is a directory: cannot write it to standard output", src))
		}
		return copyOut(fsys, src, a.stdout)
	}
	if st.IsDir() {
		if !*recursive {
			return usageError(fmt.Errorf("%s is a directory (use -r)", src))
		}
		var written []string
		err := getTree(ctx, a, fsys, src, dest, *force, &written)
		if serr := syncFiles(dest, written); err == nil {
			err = serr
		}
		return err
	}
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		dest = filepath.Join(dest, path.Base(src))
	}
	return getFile(fsys, src, dest, st, *force, nil)
}

func copyOut(fsys filesystem.FS, src string, w io.Writer) error {
	f, err := fsys.Open(src)
	if err != nil {
		return fsError(err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return fsError(err)
}

// getFile copies one file. With written non-nil, the file is not synced
// but its name is added there, for syncFiles at the end of a tree.
func getFile(fsys filesystem.FS, src, dest string, st fs.FileInfo, force bool, written *[]string) error {
	if _, err := os.Lstat(dest); err == nil && !force {
		return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", dest))
	}
	err := writeAtomic(dest, func(w io.Writer) error { return copyOut(fsys, src, w) }, written == nil)
	if err != nil {
		return err
	}
	if written != nil {
		*written = append(*written, dest)
	}
	return os.Chtimes(dest, st.ModTime(), st.ModTime())
}

// getLink recreates a symbolic link as a link with the same target (as
// cp -r does); the target is not followed.
func getLink(fsys filesystem.FS, src, dest string, force bool) error {
	target, err := fsys.Readlink(src)
	if err != nil {
		return fsError(err)
	}
	if _, err := os.Lstat(dest); err == nil {
		if !force {
			return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", dest))
		}
		if err := os.Remove(dest); err != nil {
			return err
		}
	}
	return os.Symlink(filepath.FromSlash(target), dest)
}

// getTree copies the directory src to dest: files with their modification
// times, links as links; devices, fifos and sockets are skipped with a
// warning.
func getTree(ctx context.Context, a *app, fsys filesystem.FS, src, dest string, force bool, written *[]string) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	ents, err := fsys.ReadDir(src)
	if err != nil {
		return fsError(err)
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := path.Join(src, e.Name())
		d := filepath.Join(dest, localName(e.Name()))
		switch t := e.Type(); {
		case t.IsDir():
			if err := getTree(ctx, a, fsys, s, d, force, written); err != nil {
				return err
			}
			continue
		case t&fs.ModeSymlink != 0:
			if err := getLink(fsys, s, d, force); err != nil {
				return err
			}
			continue
		case !t.IsRegular():
			fmt.Fprintf(a.stderr, "cryptvol get: skipping %s (%v)\n", s, t)
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return fsError(err)
		}
		if err := getFile(fsys, s, d, fi, force, written); err != nil {
			return err
		}
	}
	return nil
}

// localName refuses names that would escape the destination directory.
func localName(n string) string {
	if n == ".." || n == "." || filepath.Base(n) != n {
		return "_" + filepath.Base(n)
	}
	return n
}
