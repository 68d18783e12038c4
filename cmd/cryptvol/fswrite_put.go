package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// putTree is put on any filesystem: every destination and the free space
// are checked before anything is written, each file goes in under a
// temporary name and is renamed over its destination when complete (a
// replaced file keeps its old content until then), and Ctrl-C leaves no
// partial file.
func putTree(ctx context.Context, a *app, t writeTree, srcs []string, dest string, into, force bool, lk putLinks) error {
	lk.keep = hasSymlinks(t)
	plan, err := planPut(a, t.Stat, srcs, dest, into, lk)
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
			sweepVolumeDir(a, t, d)
		}
	}
	if err := checkPutTree(t, jobs, force); err != nil {
		return err
	}
	putOne := func(j putJob) error { return putTreeFile(ctx, t, j) }
	var publish func() error
	if b := newPutBatch(t); b != nil {
		putOne = func(j putJob) error { return b.put(ctx, j) }
		publish = b.publish
	}
	if err := copyJobs(ctx, jobs, t, putOne, publish, fsError); err != nil {
		return err
	}
	return skippedLinks(fsName(t.Type()), plan.skipped)
}

// checkPutTree refuses, before anything is written, a put that cannot
// complete: a file that exists (without --force) or is read-only, a
// directory in the way, a file larger than the filesystem holds, or more
// data than the space available holds (counted in whole blocks, a block
// for each new directory; the filesystem's own metadata comes on top, so
// a put that passes may still meet a full volume, and then removes its
// partial file).
func checkPutTree(t writeTree, jobs []putJob, force bool) error {
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
			return fsError(err)
		}
		if j.dir {
			if exists && !st.IsDir() {
				return withCode(exitDestroy, fmt.Errorf("%s exists in the volume and is not a directory", j.dest))
			}
			if !exists {
				need += bs
			}
			continue
		}
		if exists && !force {
			return withCode(exitDestroy, fmt.Errorf("%s exists in the volume (use --force to replace it)", j.dest))
		}
		if exists && st.IsDir() {
			return withCode(exitDestroy, fmt.Errorf("%s is a directory in the volume", j.dest))
		}
		if exists && isProtected(t, st) {
			return withCode(exitDestroy, fmt.Errorf("%s is read-only in the volume: not replaced", j.dest))
		}
		j.replaces = exists
		if max := sf.MaxFileSize; max > 0 && j.size > max {
			return withCode(exitIO, fmt.Errorf("%s is %s: a %s file holds at most %s (%d bytes); nothing was written", j.src, humanSize(j.size), fsName(t.Type()), humanLimit(max), max))
		}
		// A replaced file's blocks are freed only once the new content
		// is complete, so they do not count as free.
		need += (j.size + bs - 1) / bs * bs
		bytes += j.size
	}
	if sf.TotalBytes > 0 && need > sf.AvailBytes {
		return withCode(exitIO, fmt.Errorf("%w: the files need %s (%d %s of %d bytes), %s is available; nothing was written",
			filesystem.ErrNoSpace, humanSize(bytes), need/bs, blockWord(t.Type()), bs, humanSize(sf.AvailBytes)))
	}
	return nil
}

// humanLimit names a size limit exactly where humanSize would round it:
// FAT's 4 GiB - 1 byte.
func humanLimit(n int64) string {
	if (n+1)%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB - 1 byte", (n+1)>>30)
	}
	return humanSize(n)
}

// blockWord is what the filesystem calls its allocation unit.
func blockWord(fstype string) string {
	if strings.HasPrefix(fstype, "ext") {
		return "blocks"
	}
	return "clusters"
}

// putTreeFile copies one local file in through a temporary name in the
// destination's directory.
func putTreeFile(ctx context.Context, t writeTree, j putJob) error {
	if j.link != "" {
		return putTreeLink(t, j)
	}
	tmp, err := stageTreeFile(ctx, t, j)
	if err != nil {
		return err
	}
	if err := t.Rename(tmp, j.dest); err != nil {
		t.Remove(tmp)
		return fsError(fmt.Errorf("%s: %w", j.dest, err))
	}
	return nil
}

// stageTreeFile copies one local file in under a temporary name in the
// destination's directory, complete with its times (and, replacing a
// file, that file's metadata), and returns the name: renaming it onto
// j.dest puts it in place. On failure nothing is left.
func stageTreeFile(ctx context.Context, t writeTree, j putJob) (string, error) {
	var in io.Reader = j.in // standard input ("-")
	if in == nil {
		f, err := os.Open(j.src)
		if err != nil {
			return "", err
		}
		defer f.Close()
		in = f
	}
	dir, base := path.Split(j.dest)
	tmp := path.Join(dir, atomicfile.TempName(base))
	perm := j.perm
	if perm == 0 {
		perm = 0o644
	}
	out, err := t.CreateExcl(tmp, perm)
	if err != nil {
		return "", fsError(inVolume(fmt.Errorf("%s: %w", j.dest, err)))
	}
	copyFn := copyCtx
	if j.size >= 4<<20 {
		copyFn = copyAhead
	}
	var dst io.Writer = out
	if h, ok := t.(*hintedTree); ok {
		dst = hintWriter{out, h}
	}
	n, err := copyFn(ctx, dst, in)
	if max := t.Statfs().MaxFileSize; err == nil && j.in != nil && max > 0 && n > max {
		// Standard input is not sized in advance: the limit is checked
		// here.
		err = fmt.Errorf("standard input is larger than a %s file holds (%s)", fsName(t.Type()), humanLimit(max))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = t.Chtimes(tmp, j.mtime, j.mtime)
	}
	if err == nil && j.replaces {
		// A replaced file keeps its attributes and creation time, as it
		// would if it were rewritten in place.
		err = keepMetadata(t, j.dest, tmp)
	}
	if err != nil {
		t.Remove(tmp)
		if errors.Is(err, context.Canceled) {
			return "", err
		}
		return "", fsError(fmt.Errorf("%s: %w", j.dest, err))
	}
	return tmp, nil
}

// putTreeLink makes a symbolic link under a temporary name and renames
// it over its destination.
func putTreeLink(t writeTree, j putJob) error {
	dir, base := path.Split(j.dest)
	tmp := path.Join(dir, atomicfile.TempName(base))
	err := t.Symlink(j.link, tmp)
	if err == nil {
		if err = t.Rename(tmp, j.dest); err != nil {
			t.Remove(tmp)
		}
	}
	if err != nil {
		return fsError(fmt.Errorf("%s: %w", j.dest, err))
	}
	return nil
}

// rmTree, mkdirTree and mvTree are rm, mkdir and mv on a writeTree.
func rmTree(t writeTree, paths []string, recursive bool) error {
	for _, p := range paths {
		p = volPath(p)
		if p == "/" {
			return usageError(errors.New("refusing to remove the root directory"))
		}
		st, err := t.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			if !recursive {
				return usageError(fmt.Errorf("%s is a directory (use -r)", p))
			}
			err = t.RemoveAll(p)
		} else {
			err = t.Remove(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func mkdirTree(t writeTree, paths []string, parents bool) error {
	for _, p := range paths {
		if err := checkPathNames(t.Type(), p); err != nil {
			return err
		}
	}
	for _, p := range paths {
		var err error
		if parents {
			err = t.MkdirAll(volPath(p))
		} else {
			err = t.Mkdir(volPath(p))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func mvTree(t writeTree, src, dst string, force bool) error {
	if _, err := t.Stat(src); err != nil {
		return err
	}
	if err := checkPathNames(t.Type(), dst); err != nil {
		return err
	}
	if st, err := t.Stat(dst); err == nil {
		if st.IsDir() {
			dst = path.Join(dst, path.Base(src))
			if dst == src {
				return badOperand(fmt.Errorf("%s is already in %s", src, path.Dir(dst)))
			}
			if _, err := t.Stat(dst); err == nil && !force {
				return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to replace it)", dst))
			}
		} else if !force {
			return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to replace it)", dst))
		}
	}
	return t.Rename(src, dst)
}
