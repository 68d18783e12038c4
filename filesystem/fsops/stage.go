package fsops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// stager writes the files of a Put, each under a temporary name in its
// destination's directory.
type stager struct {
	t Target
	o *PutOptions
}

// putFile copies one local file in through a temporary name and renames
// it onto its destination.
func (s *stager) putFile(ctx context.Context, j putJob) error {
	if j.link != "" {
		return s.putLink(j)
	}
	tmp, err := s.stage(ctx, j)
	if err != nil {
		return err
	}
	if err := s.t.Rename(tmp, j.dest); err != nil {
		s.t.Remove(tmp)
		return kind(Failed, fmt.Errorf("%s: %w", j.dest, err))
	}
	return nil
}

// stage copies one local file in under a temporary name in the
// destination's directory, complete with its times (and, replacing a
// file, that file's metadata), and returns the name: renaming it onto
// j.dest puts it in place. On failure nothing is left.
func (s *stager) stage(ctx context.Context, j putJob) (string, error) {
	t := s.t
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
		return "", kind(Failed, kind(InVolume, fmt.Errorf("%s: %w", j.dest, err)))
	}
	var dst io.Writer = out
	if s.o.Wrote != nil {
		dst = countingWriter{out, s.o.Wrote}
	}
	n, err := s.o.Copy(ctx, dst, in, j.size)
	if max := t.Statfs().MaxFileSize; err == nil && j.in != nil && max > 0 && n > max {
		// Standard input is not sized in advance: the limit is checked
		// here.
		err = fmt.Errorf("standard input is larger than a %s file holds (%s)", FSName(t.Type()), sizeLimit(max))
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
		return "", kind(Failed, fmt.Errorf("%s: %w", j.dest, err))
	}
	return tmp, nil
}

// putLink makes a symbolic link under a temporary name and renames it
// over its destination.
func (s *stager) putLink(j putJob) error {
	dir, base := path.Split(j.dest)
	tmp := path.Join(dir, atomicfile.TempName(base))
	err := s.t.Symlink(j.link, tmp)
	if err == nil {
		if err = s.t.Rename(tmp, j.dest); err != nil {
			s.t.Remove(tmp)
		}
	}
	if err != nil {
		return kind(Failed, fmt.Errorf("%s: %w", j.dest, err))
	}
	return nil
}

// countingWriter tells wrote what is written through it.
type countingWriter struct {
	w     io.Writer
	wrote func(int64)
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.wrote(int64(n))
	return n, err
}

// sweepLeftovers removes from the volume directory dir the temporary
// files of puts that were killed (their process is gone), and tells warn
// of those and of those whose owner may still run.
func sweepLeftovers(t Target, dir string, warn func(string)) {
	ents, err := t.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := path.Join(dir, e.Name())
		switch pid, st := atomicfile.CheckOwner(e.Name()); st {
		case atomicfile.Gone:
			if err := t.Remove(p); err != nil {
				warn(fmt.Sprintf("could not remove %s, left in the volume by an interrupted cryptvol (process %d, no longer running): %v", p, pid, err))
			} else {
				warn(fmt.Sprintf("removed %s, left in the volume by an interrupted cryptvol (process %d, no longer running)", p, pid))
			}
		case atomicfile.Unknown:
			warn(fmt.Sprintf("left %s in the volume alone: process %d is running and may still write it; if that is not a cryptvol, remove the file", p, pid))
		}
	}
}
