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

	"github.com/cryptvol/cryptvol/fat"
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
	ffs, tree, done, err := openWrite(ctx, a, fl, cf, fl.Arg(0))
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
	if tree != nil {
		return closeTree(done, putTree(ctx, a, tree, srcs, dest, into, *force, lk))
	}
	err = putAll(ctx, a, ffs, srcs, dest, into, *force, lk)
	if cerr := done(); err == nil {
		err = fatError(cerr)
	}
	return err
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

// fatMaxFileSize is the largest file FAT can hold: its directory entry
// records the size in 32 bits.
const fatMaxFileSize = 1<<32 - 1

// putJob is one file (or directory, to create) that put copies in.
type putJob struct {
	src, dest string
	dir       bool
	size      int64
	mtime     time.Time
	perm      fs.FileMode   // the source's permissions (kept where the filesystem has them)
	old       *fat.FileInfo // the file replaced (--force), if any
	in        io.Reader     // the data when src is "-" (standard input)
	link      string        // a symbolic link's target: the job makes the link
}

// stdinSource checks a "-" source: standard input, once, to a named file.
func stdinSource(a *app, srcs []string, dest string, into bool) error {
	if a.stdinTaken || len(srcs) != 1 || into {
		return usageError(errors.New("- (standard input) is one file and needs its name in the volume: put VOLUME - /dir/NAME"))
	}
	a.stdinTaken = true
	return nil
}

func putAll(ctx context.Context, a *app, ffs *fat.FS, srcs []string, dest string, into, force bool, lk putLinks) error {
	plan, err := planPut(a, func(p string) (fs.FileInfo, error) {
		fi, err := ffs.Stat(p)
		if err != nil {
			return nil, err
		}
		return fi, nil
	}, srcs, dest, into, lk)
	if err != nil {
		return err
	}
	jobs := plan.jobs
	if err := checkNames("vfat", jobs); err != nil {
		return err
	}
	// Leftovers of killed puts first: they hold clusters the check below
	// counts as used.
	swept := map[string]bool{}
	for _, j := range jobs {
		if d := path.Dir(j.dest); !j.dir && !swept[d] {
			swept[d] = true
			sweepVolumeDir(a, ffs, d)
		}
	}
	if err := checkPut(ffs, jobs, force); err != nil {
		return err
	}
	if err := copyJobs(ctx, jobs, ffs, func(j putJob) error { return putFile(ctx, ffs, j) }, fatError); err != nil {
		return err
	}
	return skippedLinks("FAT", plan.skipped)
}

// putDirs is what copyJobs needs of a filesystem besides writing files:
// *fat.FS and the ext4/NTFS/exFAT writeTree both have it.
type putDirs interface {
	MkdirAll(name string) error
	Chtimes(name string, atime, mtime time.Time) error
}

// copyJobs carries out planned and checked jobs in order: directories as
// they come, files through putOne, and at the end the directories' times,
// deepest first (writing into them changed them). Ctrl-C stops between
// files and inside one (putOne removes its partial file) and says how
// far it got. wrap gives the filesystem's errors their exit codes.
func copyJobs(ctx context.Context, jobs []putJob, dirs putDirs, putOne func(putJob) error, wrap func(error) error) error {
	files, copied := 0, 0
	for _, j := range jobs {
		if !j.dir {
			files++
		}
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			return interrupted("%d of %d files copied", copied, files)
		}
		if j.dir {
			if err := dirs.MkdirAll(j.dest); err != nil {
				return wrap(inVolume(err))
			}
			continue
		}
		err := putOne(j)
		if errors.Is(err, context.Canceled) {
			return interrupted("%d of %d files copied; %s partial, removed", copied, files, j.dest)
		}
		if err != nil {
			return err
		}
		copied++
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

// checkPut refuses, before anything is written, a put that cannot
// complete: a file that exists (without --force), a file larger than FAT
// allows, or more data than the free space holds.
func checkPut(ffs *fat.FS, jobs []putJob, force bool) error {
	sf := ffs.Statfs()
	cs := int64(sf.ClusterSize)
	var need, bytes int64
	for i := range jobs {
		j := &jobs[i]
		st, err := ffs.Stat(j.dest)
		exists := err == nil
		if j.dir {
			if !exists {
				need++ // its first cluster
			} else if !st.IsDir() {
				return withCode(exitDestroy, fmt.Errorf("%s exists in the volume and is not a directory", j.dest))
			}
			continue
		}
		if exists && !force {
			return withCode(exitDestroy, fmt.Errorf("%s exists in the volume (use --force to replace it)", j.dest))
		}
		if exists {
			if st.IsDir() {
				return withCode(exitDestroy, fmt.Errorf("%s is a directory in the volume", j.dest))
			}
			if st.Attributes()&fat.AttrReadOnly != 0 {
				return withCode(exitDestroy, fmt.Errorf("%s is read-only in the volume: not replaced", j.dest))
			}
			j.old = st
		}
		if j.size > fatMaxFileSize {
			return withCode(exitIO, fmt.Errorf("%s is %s: a FAT file holds at most 4 GiB - 1 byte (%d bytes); nothing was written", j.src, humanSize(j.size), int64(fatMaxFileSize)))
		}
		// A replaced file's old clusters are freed only once the new
		// content is complete, so they do not count as free.
		need += (j.size + cs - 1) / cs
		bytes += j.size
	}
	if need > int64(sf.FreeClusters) {
		return withCode(exitIO, fmt.Errorf("%w: the files need %s (%d clusters of %d bytes), %s is free; nothing was written",
			fat.ErrNoSpace, humanSize(bytes), need, cs, humanSize(sf.FreeBytes)))
	}
	return nil
}

// putFile copies one local file into the volume through a temporary name
// in the destination's directory, renamed over the destination when
// complete: a failure or an interrupt leaves no partial file, and a
// replaced file keeps its old content until then.
func putFile(ctx context.Context, ffs *fat.FS, j putJob) error {
	var in io.Reader = j.in
	if in == nil {
		f, err := os.Open(j.src)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	dir, base := path.Split(j.dest)
	tmp := path.Join(dir, atomicfile.TempName(base))
	out, err := ffs.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fatError(inVolume(fmt.Errorf("%s: %w", j.dest, err)))
	}
	_, err = copyCtx(ctx, out, in)
	if err == nil && j.in != nil {
		// Standard input is not sized in advance: FAT's limit is
		// checked here.
		if st, serr := out.Stat(); serr == nil && st.Size() > fatMaxFileSize {
			err = fmt.Errorf("standard input is larger than a FAT file holds (4 GiB - 1 byte)")
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ffs.Chtimes(tmp, j.mtime, j.mtime)
	}
	if err == nil && j.old != nil {
		// A replaced file keeps its attributes and creation time, as it
		// did when it was rewritten in place.
		err = ffs.SetAttributes(tmp, j.old.Attributes()|fat.AttrArchive)
		if err == nil {
			err = ffs.SetCreateTime(tmp, j.old.CreateTime())
		}
	}
	if err == nil {
		err = ffs.Rename(tmp, j.dest)
	}
	if err != nil {
		ffs.Remove(tmp)
		if errors.Is(err, context.Canceled) {
			return err
		}
		return fatError(fmt.Errorf("%s: %w", j.dest, err))
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
