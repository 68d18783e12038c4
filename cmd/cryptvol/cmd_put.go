package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem/fsops"
	"github.com/cryptvol/cryptvol/internal/ctxio"
)

func init() {
	register(&command{
		name:    "put",
		summary: "copy files or directories into a volume",
		usage: `Usage: cryptvol put VOLUME SRC... [DESTDIR] [-r] [-L] [--force] [credentials]

Copies local files (and, with -r, directories) into the filesystem inside
VOLUME (FAT, exFAT and ext2/3/4 written by cryptvol itself, ext4 through
its journal; NTFS through ntfs-3g on a private mount for the length of the
command: no root; see 'cryptvol help mount'), by cp's rules: with one SRC the
destination is /; with several, the last argument is the destination
inside the volume. A destination that is a directory, or ends in '/',
means "into" (a missing DIR/ is made); otherwise a single SRC gets that
name: put VOLUME a.txt /b.txt. SRC - is standard input, stored under the
name given: put VOLUME - /dir/NAME.
Symbolic links are copied as cp -r copies them: as links on ext2/3/4 and
NTFS (a link given as SRC too, with -r); FAT and exFAT have none, so put
copies everything else, lists the links it left out and exits 1; -L copies
what every link points to instead. Every destination name is checked
against the filesystem's rule (255 UTF-16 units on FAT, exFAT and NTFS,
255 bytes on ext4; FAT's and exFAT's forbidden characters; on FAT, exFAT
and NTFS not a device name of Windows such as CON, NUL, AUX.C or LPT1,
which Windows cannot open) before anything is written: a name that cannot
be stored is exit 1, nothing written.
Existing files in the volume are kept unless --force. Modification times
are preserved. Before anything is written, put checks every destination,
the FAT file size limit (4 GiB - 1 byte) and the free space. Each file is
written under a temporary name and renamed when complete, so a failure or
Ctrl-C leaves no partial file (a replaced file keeps its old content);
Ctrl-C stops inside a file and says how many were copied (exit 130).
put exits 0 only once everything it wrote is flushed to the disk; on FAT
and exFAT it renames files into place in batches, so a power cut leaves
the files of the last batch under their temporary names, which the next
put into that directory removes.

Example:
  cryptvol put secret.hc notes.txt /docs --password-file pw.txt
  cryptvol put secret.hc photos/ -r --password-file pw.txt
  cryptvol put secret.hc photos/ -r -L --password-file pw.txt
  cryptvol put secret.hc notes.txt /new/ --password-file pw.txt
  tar c dir | cryptvol put secret.hc - /dir.tar --password-file pw.txt
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
	follow := fl.BoolP("dereference", "L", false, "copy what symbolic links point to, not the links")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, -1); err != nil {
		return err
	}
	srcs := fl.Args()[1:]
	dest, into := "/", true
	if len(srcs) > 1 {
		// cp's rules: the last argument is the destination; an existing
		// directory or a trailing '/' means "into".
		last := srcs[len(srcs)-1]
		dest, into = volPath(last), strings.HasSuffix(last, "/")
		srcs = srcs[:len(srcs)-1]
	}
	for _, s := range srcs {
		if s == "-" {
			if err := stdinSource(a, srcs, dest, into); err != nil {
				return err
			}
			continue
		}
		fi, err := os.Stat(s)
		if err != nil && *recursive && !*follow {
			fi, err = os.Lstat(s) // a dangling link, copied as a link
		}
		if err != nil {
			return err
		}
		if fi.IsDir() && !*recursive {
			return usageError(fmt.Errorf("%s is a directory (use -r)", s))
		}
	}
	tree, done, err := openWrite(ctx, a, fl, cf, fl.Arg(0))
	if err != nil {
		if ctx.Err() != nil {
			// Stopped while getting the key or opening the filesystem:
			// the same account as a stop between files, on every
			// filesystem.
			return interrupted("%d of %d files copied", 0, fsops.CountSourceFiles(srcs))
		}
		return err
	}
	o := fsops.PutOptions{
		Sources: srcs, Dest: dest, Into: into, Force: *force,
		Follow: *follow, Recursive: *recursive, Stdin: a.stdin,
		Copy: putCopy, Wrote: putHint(tree), Warn: func(s string) { a.warnf("%s", s) },
	}
	if putBatching {
		o.BatchFiles = putBatchFiles
	}
	return closeTree(done, opError(fsops.Put(ctx, tree, o)), fl.Arg(0))
}

// Where the filesystem renames many files for the flushes of one (FAT,
// exFAT), put stages files and renames them into place in batches (see
// fsops' batch.go).
var (
	// putBatchFiles bounds a batch. (A variable: the crash explorer
	// makes batches of a few files, to see several in one put.)
	putBatchFiles = 1024
	// putBatching off puts each file for its own flushes, as before
	// batches: a test shows the explorer catching what that misses.
	putBatching = true
)

// putCopy copies a file into the volume: a large one with the next MiB
// read while the last is written.
func putCopy(ctx context.Context, dst io.Writer, src io.Reader, size int64) (int64, error) {
	if size >= 4<<20 {
		return ctxio.CopyAhead(ctx, dst, src)
	}
	return ctxio.Copy(ctx, dst, src)
}

// stdinSource checks a "-" source: standard input, once, to a named file.
func stdinSource(a *app, srcs []string, dest string, into bool) error {
	if a.stdinTaken || len(srcs) != 1 || into {
		return usageError(errors.New("- (standard input) is one file and needs its name in the volume: put VOLUME - /dir/NAME"))
	}
	a.stdinTaken = true
	return nil
}
