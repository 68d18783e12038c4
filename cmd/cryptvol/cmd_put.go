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

	"github.com/cryptvol/cryptvol/internal/atomicfile"
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
			return interrupted("%d of %d files copied", 0, countSourceFiles(srcs))
		}
		return err
	}
	lk := putLinks{follow: *follow, recursive: *recursive}
	return closeTree(done, putTree(ctx, a, tree, srcs, dest, into, *force, lk), fl.Arg(0))
}

// countSourceFiles counts the files put would copy from srcs (those
// below a directory too; "-" is one), as copyJobs counts its jobs.
func countSourceFiles(srcs []string) int {
	n := 0
	for _, s := range srcs {
		if s == "-" {
			n++
			continue
		}
		filepath.WalkDir(s, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return nil
		})
	}
	return n
}

// putJob is one file (or directory, to create) that put copies in.
type putJob struct {
	src, dest string
	dir       bool
	size      int64
	mtime     time.Time
	perm      fs.FileMode // the source's permissions (kept where the filesystem has them)
	replaces  bool        // an existing file is replaced (--force)
	in        io.Reader   // the data when src is "-" (standard input)
	link      string      // a symbolic link's target: the job makes the link
}

// stdinSource checks a "-" source: standard input, once, to a named file.
func stdinSource(a *app, srcs []string, dest string, into bool) error {
	if a.stdinTaken || len(srcs) != 1 || into {
		return usageError(errors.New("- (standard input) is one file and needs its name in the volume: put VOLUME - /dir/NAME"))
	}
	a.stdinTaken = true
	return nil
}

// putDirs is what copyJobs needs of a filesystem besides writing files.
type putDirs interface {
	MkdirAll(name string) error
	Chtimes(name string, atime, mtime time.Time) error
}

// copyJobs carries out planned and checked jobs in order: directories as
// they come, files through putOne, and at the end the directories' times,
// deepest first (writing into them changed them). Ctrl-C stops between
// files and inside one (putOne removes its partial file) and says how
// far it got. wrap gives the filesystem's errors their exit codes.
// publish, if set, renames into place the files putOne left under
// temporary names (a batch, see putBatch): after the last file, and
// before any return once a file was put, so that every file counted as
// copied is in place and an error leaves what the files before it made.
func copyJobs(ctx context.Context, jobs []putJob, dirs putDirs, putOne func(putJob) error, publish func() error, wrap func(error) error) error {
	files, copied := 0, 0
	for _, j := range jobs {
		if !j.dir {
			files++
		}
	}
	// settle publishes the files put so far and returns err, or the
	// publishing's error when there is none.
	settle := func(err error) error {
		if publish == nil {
			return err
		}
		if perr := publish(); err == nil {
			err = perr
		}
		return err
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			return settle(interrupted("%d of %d files copied", copied, files))
		}
		if j.dir {
			if err := dirs.MkdirAll(j.dest); err != nil {
				return settle(wrap(inVolume(err)))
			}
			continue
		}
		err := putOne(j)
		if errors.Is(err, context.Canceled) {
			return settle(interrupted("%d of %d files copied; %s partial, removed", copied, files, j.dest))
		}
		if err != nil {
			return settle(err)
		}
		copied++
	}
	if err := settle(nil); err != nil {
		return err
	}
	for i := len(jobs) - 1; i >= 0; i-- {
		if j := jobs[i]; j.dir && !j.mtime.IsZero() {
			if err := dirs.Chtimes(j.dest, j.mtime, j.mtime); err != nil {
				return wrap(err)
			}
		}
	}
	return nil
}

// sweepVolumeDir removes from the volume directory dir the temporary files
// of put runs that were killed (their process is gone), and reports those
// whose owner may still run.
func sweepVolumeDir(a *app, ffs interface {
	ReadDir(string) ([]fs.DirEntry, error)
	Remove(string) error
}, dir string) {
	ents, err := ffs.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := path.Join(dir, e.Name())
		switch pid, st := atomicfile.CheckOwner(e.Name()); st {
		case atomicfile.Gone:
			if err := ffs.Remove(p); err != nil {
				a.warnf("could not remove %s, left in the volume by an interrupted cryptvol (process %d, no longer running): %v", p, pid, err)
			} else {
				a.warnf("removed %s, left in the volume by an interrupted cryptvol (process %d, no longer running)", p, pid)
			}
		case atomicfile.Unknown:
			a.warnf("left %s in the volume alone: process %d is running and may still write it; if that is not a cryptvol, remove the file", p, pid)
		}
	}
}
