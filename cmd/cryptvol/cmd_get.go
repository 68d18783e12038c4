package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/cryptvol/cryptvol/fat"
)

func init() {
	register(&command{
		name:    "get",
		summary: "copy files or directories out of a volume",
		usage: `Usage: cryptvol get VOLUME PATH [DEST|-] [-r] [--force] [credentials]

Copies the file PATH from the FAT filesystem inside VOLUME to DEST (default:
its name in the current directory), or to standard output with -. A
directory needs -r and is copied with everything in it. Existing local files
are kept unless --force; each file is written to a temporary name and
renamed when complete, with its modification time.

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
	ffs, done, err := openFAT(ctx, a, fl, cf, fl.Arg(0), fatRead)
	if err != nil {
		return err
	}
	defer done()
	st, err := ffs.Stat(src)
	if err != nil {
		return fatError(err)
	}
	if dest == "-" {
		if st.IsDir() {
			return usageError(fmt.Errorf("%s is a directory: cannot write it to standard output", src))
		}
		return copyOut(ffs, src, a.stdout)
	}
	if st.IsDir() {
		if !*recursive {
			return usageError(fmt.Errorf("%s is a directory (use -r)", src))
		}
		return getTree(ctx, ffs, src, dest, *force)
	}
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		dest = filepath.Join(dest, path.Base(src))
	}
	return getFile(ffs, src, dest, st, *force)
}

func copyOut(ffs *fat.FS, src string, w io.Writer) error {
	f, err := ffs.Open(src)
	if err != nil {
		return fatError(err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return fatError(err)
}

func getFile(ffs *fat.FS, src, dest string, st *fat.FileInfo, force bool) error {
	if _, err := os.Lstat(dest); err == nil && !force {
		return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", dest))
	}
	err := writeAtomically(dest, func(w io.Writer) error { return copyOut(ffs, src, w) })
	if err != nil {
		return err
	}
	return os.Chtimes(dest, st.ModTime(), st.ModTime())
}

func getTree(ctx context.Context, ffs *fat.FS, src, dest string, force bool) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	ents, err := ffs.ReadDir(src)
	if err != nil {
		return fatError(err)
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := path.Join(src, e.Name())
		d := filepath.Join(dest, localName(e.Name()))
		if e.IsDir() {
			if err := getTree(ctx, ffs, s, d, force); err != nil {
				return err
			}
			continue
		}
		fi, err := ffs.Stat(s)
		if err != nil {
			return fatError(err)
		}
		if err := getFile(ffs, s, d, fi, force); err != nil {
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
