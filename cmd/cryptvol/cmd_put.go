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

	"github.com/cryptvol/cryptvol/fat"
)

func init() {
	register(&command{
		name:    "put",
		summary: "copy files or directories into a volume",
		usage: `Usage: cryptvol put VOLUME SRC... [DESTDIR] [-r] [--force] [credentials]

Copies local files (and, with -r, directories) into the FAT filesystem
inside VOLUME. With one SRC the destination is / unless given; with several,
the last argument is the destination directory inside the volume, as with
cp. A single file may also be given a new name: put VOLUME a.txt /b.txt.
Existing files in the volume are kept unless --force. Modification times
are preserved.

Example:
  cryptvol put secret.hc notes.txt /docs --password-file pw.txt
  cryptvol put secret.hc photos/ -r --password-file pw.txt
`,
		run: runPut,
	})
}

func runPut(ctx context.Context, a *app, args []string) error {
	c := commands["put"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	recursive := fl.BoolP("recursive", "r", false, "copy directories recursively")
	force := fl.Bool("force", false, "overwrite existing files in the volume")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	srcs := fl.Args()[1:]
	dest := "/"
	if len(srcs) > 1 {
		dest = volPath(srcs[len(srcs)-1])
		srcs = srcs[:len(srcs)-1]
	}
	for _, s := range srcs {
		fi, err := os.Stat(s)
		if err != nil {
			return err
		}
		if fi.IsDir() && !*recursive {
			return usageError(fmt.Errorf("%s is a directory (use -r)", s))
		}
	}
	ffs, done, err := openFAT(ctx, a, fl, cf, fl.Arg(0), fatWrite)
	if err != nil {
		return err
	}
	err = putAll(ctx, ffs, srcs, dest, *force)
	if cerr := done(); err == nil {
		err = fatError(cerr)
	}
	return err
}

func putAll(ctx context.Context, ffs *fat.FS, srcs []string, dest string, force bool) error {
	st, err := ffs.Stat(dest)
	destIsDir := err == nil && st.IsDir()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fatError(err)
	}
	if !destIsDir {
		// Only "put VOLUME file /newname" may name a file that does not
		// exist yet (or replace one, with --force).
		if len(srcs) != 1 {
			return usageError(fmt.Errorf("%s is not a directory in the volume", dest))
		}
		if fi, err := os.Stat(srcs[0]); err == nil && fi.IsDir() {
			if err := ffs.MkdirAll(dest); err != nil {
				return fatError(err)
			}
			return putTree(ctx, ffs, srcs[0], dest, force)
		}
		return putFile(ffs, srcs[0], dest, force)
	}
	for _, s := range srcs {
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := os.Stat(s)
		if err != nil {
			return err
		}
		target := path.Join(dest, filepath.Base(filepath.Clean(s)))
		if fi.IsDir() {
			if err := ffs.MkdirAll(target); err != nil {
				return fatError(err)
			}
			if err := putTree(ctx, ffs, s, target, force); err != nil {
				return err
			}
			continue
		}
		if err := putFile(ffs, s, target, force); err != nil {
			return err
		}
	}
	return nil
}

func putTree(ctx context.Context, ffs *fat.FS, src, dest string, force bool) error {
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := filepath.Join(src, e.Name())
		d := path.Join(dest, e.Name())
		switch {
		case e.IsDir():
			if err := ffs.MkdirAll(d); err != nil {
				return fatError(err)
			}
			if err := putTree(ctx, ffs, s, d, force); err != nil {
				return err
			}
		case e.Type().IsRegular():
			if err := putFile(ffs, s, d, force); err != nil {
				return err
			}
		}
	}
	return nil
}

// putFile copies one local file into the volume. A new file that fails
// half-way is removed again, so nothing partial is left behind; a replaced
// file keeps its old content until the new one is complete.
func putFile(ffs *fat.FS, src, dest string, force bool) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	_, statErr := ffs.Stat(dest)
	existed := statErr == nil
	if existed && !force {
		return withCode(exitDestroy, fmt.Errorf("%s exists in the volume (use --force to replace it)", dest))
	}
	out, err := ffs.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fatError(err)
	}
	if _, err = io.Copy(out, in); err == nil {
		err = out.Close()
	} else {
		out.Close()
	}
	if err != nil {
		if !existed {
			ffs.Remove(dest)
		}
		return fatError(fmt.Errorf("%s: %w", dest, err))
	}
	return fatError(ffs.Chtimes(dest, fi.ModTime(), fi.ModTime()))
}
