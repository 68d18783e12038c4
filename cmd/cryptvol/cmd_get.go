package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"

	"github.com/cryptvol/cryptvol/filesystem/fsops"
	"github.com/cryptvol/cryptvol/internal/ctxio"
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
		if err := fsops.CopyOut(ctx, fsys, src, a.stdout, getCopy); errors.Is(err, context.Canceled) {
			return interrupted("%s partly written to standard output", src)
		} else if err != nil {
			return opError(err)
		}
		return nil
	}
	return opError(fsops.Get(ctx, fsys, src, st, dest, getOptions(a, *recursive, *force)))
}

// getOptions is how get copies out: with the umask, a tree synced once
// (syncFiles), leftovers and skipped devices told on stderr.
func getOptions(a *app, recursive, force bool) fsops.GetOptions {
	return fsops.GetOptions{
		Recursive: recursive, Force: force, Umask: umask(),
		Copy: getCopy, Sync: syncFiles, Leftover: a.leftover,
		Skipped: func(name string, mode fs.FileMode) {
			fmt.Fprintf(a.stderr, "cryptvol get: skipping %s (%v)\n", name, mode)
		},
	}
}

func getCopy(ctx context.Context, dst io.Writer, src io.Reader, _ int64) (int64, error) {
	return ctxio.Copy(ctx, dst, src)
}
