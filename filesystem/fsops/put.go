package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/progress"
)

// PutOptions is what Put copies, and how.
type PutOptions struct {
	// Sources are local paths; "-" is Stdin.
	Sources []string
	// Dest is the path in the volume; Into says it is a directory to
	// copy into (made if missing), as a trailing "/" says to cp.
	Dest string
	Into bool
	// Force replaces existing files.
	Force bool
	// Follow copies what links point to; Recursive copies a link given
	// as a source as a link (cp -L, cp -r).
	Follow, Recursive bool
	Stdin             io.Reader
	// Copy copies one file's data (nil: a plain copy).
	Copy CopyFunc
	// Wrote, if set, hears of each write of file data (its bytes).
	Wrote func(n int64)
	// Warn, if set, hears what Put skips or sweeps, one line each.
	Warn func(string)
	// BatchFiles bounds the files staged before their renames where the
	// filesystem renames many at once; 0 renames each on its own.
	BatchFiles int
}

func (o *PutOptions) warn(s string) {
	if o.Warn != nil {
		o.Warn(s)
	}
}

// Put copies local files into t: every destination and the free space
// are checked before anything is written, each file goes in under a
// temporary name and is renamed over its destination when complete (a
// replaced file keeps its old content until then), and a cancelled ctx
// leaves no partial file.
func Put(ctx context.Context, t Target, o PutOptions) error {
	if o.Copy == nil {
		o.Copy = plainCopy
	}
	lk := putLinks{follow: o.Follow, recursive: o.Recursive, keep: hasSymlinks(t)}
	plan, err := planPut(t.Stat, &o, lk)
	if err != nil {
		return err
	}
	jobs := plan.jobs
	// Before anything is written (or a driver started).
	if err := checkNames(t.Type(), jobs); err != nil {
		return err
	}
	swept := map[string]bool{}
	for _, j := range jobs {
		if d := path.Dir(j.dest); !j.dir && !swept[d] {
			swept[d] = true
			sweepLeftovers(t, d, o.warn)
		}
	}
	if err := checkPut(t, jobs, o.Force); err != nil {
		return err
	}
	s := &stager{t: t, o: &o}
	putOne := s.putFile
	var publish func() error
	temps := 1
	if b := newPutBatch(s, o.BatchFiles); b != nil {
		putOne, publish, temps = b.put, b.publish, o.BatchFiles
	}
	mkdir := t.MkdirAll
	if makesRoom(t) {
		mkdir = planRoom(jobs, temps).mkdirFunc(t)
		if err := readyDirs(t, jobs, mkdir); err != nil {
			return kind(Failed, kind(InVolume, err))
		}
	}
	if err := copyJobs(ctx, jobs, t, mkdir, putOne, publish); err != nil {
		return err
	}
	return skippedLinks(FSName(t.Type()), plan.skipped)
}

// checkPut refuses, before anything is written, a put that cannot
// complete: a file that exists (without Force) or is read-only, a
// directory in the way, a file larger than the filesystem holds, or more
// data than the space available holds (counted in whole blocks, a block
// for each new directory; the filesystem's own metadata comes on top, so
// a put that passes may still meet a full volume, and then removes its
// partial file).
func checkPut(t Target, jobs []putJob, force bool) error {
	sf := t.Statfs()
	bs := int64(sf.BlockSize)
	if bs <= 0 {
		bs = 1
	}
	var need, bytes int64
	for i := range jobs {
		j := &jobs[i]
		st, err := t.Stat(j.dest)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return kind(Failed, err)
		}
		if j.dir {
			if exists && !st.IsDir() {
				return kind(WouldDestroy, fmt.Errorf("%s exists in the volume and is not a directory", j.dest))
			}
			if !exists {
				need += bs
			}
			continue
		}
		if exists && !force {
			return kind(WouldDestroy, fmt.Errorf("%s exists in the volume (use --force to replace it)", j.dest))
		}
		if exists && st.IsDir() {
			return kind(WouldDestroy, fmt.Errorf("%s is a directory in the volume", j.dest))
		}
		if exists && isProtected(t, st) {
			return kind(WouldDestroy, fmt.Errorf("%s is read-only in the volume: not replaced", j.dest))
		}
		j.replaces = exists
		if max := sf.MaxFileSize; max > 0 && j.size > max {
			return kind(NoRoom, fmt.Errorf("%s is %s: a %s file holds at most %s (%d bytes); nothing was written", j.src, progress.FormatSize(j.size), FSName(t.Type()), sizeLimit(max), max))
		}
		// A replaced file's blocks are freed only once the new content
		// is complete, so they do not count as free.
		need += (j.size + bs - 1) / bs * bs
		bytes += j.size
	}
	if sf.TotalBytes > 0 && need > sf.AvailBytes {
		return kind(NoRoom, fmt.Errorf("%w: the files need %s (%d %s of %d bytes), %s is available; nothing was written",
			filesystem.ErrNoSpace, progress.FormatSize(bytes), need/bs, blockWord(t.Type()), bs, progress.FormatSize(sf.AvailBytes)))
	}
	return nil
}

// sizeLimit names a size limit exactly where FormatSize would round it:
// FAT's 4 GiB - 1 byte.
func sizeLimit(n int64) string {
	if (n+1)%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB - 1 byte", (n+1)>>30)
	}
	return progress.FormatSize(n)
}

// blockWord is what the filesystem calls its allocation unit.
func blockWord(fstype string) string {
	if strings.HasPrefix(fstype, "ext") {
		return "blocks"
	}
	return "clusters"
}

// copyJobs carries out planned and checked jobs in order: directories as
// they come (through mkdir, MkdirAll or MakeRoom), files through putOne, and at the end the directories' times,
// deepest first (writing into them changed them). A cancelled ctx stops
// it between files and inside one (putOne removes its partial file), and
// it says how far it got. publish, if set, renames into place the files
// putOne left under temporary names (a batch, see putBatch): after the
// last file, and before any return once a file was put, so that every
// file counted as copied is in place and an error leaves what the files
// before it made.
func copyJobs(ctx context.Context, jobs []putJob, t Target, mkdir func(string) error, putOne func(context.Context, putJob) error, publish func() error) error {
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
			if err := mkdir(j.dest); err != nil {
				return settle(kind(Failed, kind(InVolume, err)))
			}
			continue
		}
		err := putOne(ctx, j)
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
			if err := t.Chtimes(j.dest, j.mtime, j.mtime); err != nil {
				return kind(Failed, err)
			}
		}
	}
	return nil
}

// interrupted is the error of an operation stopped by its context, with
// what was done.
func interrupted(format string, args ...any) error {
	return kind(Interrupted, fmt.Errorf("interrupted: "+format, args...))
}
