package fsops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// putJob is one file (or directory, to create) that Put copies in.
type putJob struct {
	src, dest string
	dir       bool
	size      int64
	mtime     time.Time
	perm      fs.FileMode // the source's permissions (kept where the filesystem has them)
	replaces  bool        // an existing file is replaced (Force)
	in        io.Reader   // the data when src is "-" (Stdin)
	link      string      // a symbolic link's target: the job makes the link
}

// putLinks is how Put treats symbolic links, as cp -r does.
type putLinks struct {
	// follow copies what every link points to.
	follow bool
	// recursive: a link given as a source is a link too, as inside a
	// tree; without it the link is followed (cp without -r does the
	// same).
	recursive bool
	// keep: the filesystem holds symbolic links (ext2/3/4, NTFS); on FAT
	// and exFAT, links that are not followed are listed as not copied.
	keep bool
}

// putPlan is what Put will do: the jobs in order, and the links it
// cannot copy (FAT and exFAT without Follow).
type putPlan struct {
	jobs    []putJob
	skipped []string
	warn    func(string)
}

// planPut lists what Put will write: the sources as cp would copy them
// to o.Dest, directories before what they hold.
func planPut(stat func(string) (fs.FileInfo, error), o *PutOptions, lk putLinks) (*putPlan, error) {
	dest := o.Dest
	st, err := stat(dest)
	destIsDir := err == nil && st.IsDir()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, kind(Failed, err)
	}
	p := &putPlan{warn: o.warn}
	if o.Into && !destIsDir {
		if err == nil {
			return nil, kind(BadUsage, fmt.Errorf("%s/ is a file in the volume, not a directory", dest))
		}
		// "DIR/" that does not exist yet: made, then filled.
		p.jobs = append(p.jobs, putJob{src: dest, dest: dest, dir: true})
		destIsDir = true
	}
	add := func(src, target string) error {
		if src == "-" {
			p.jobs = append(p.jobs, putJob{src: "standard input", dest: target, mtime: time.Now(), in: o.Stdin})
			return nil
		}
		return p.add(src, target, lk, lk.follow || !lk.recursive, nil)
	}
	if !destIsDir {
		// Only one source may name a file that does not exist yet (or
		// replace one, with Force).
		if len(o.Sources) != 1 {
			return nil, kind(BadUsage, fmt.Errorf("%s is not a directory in the volume", dest))
		}
		return p, add(o.Sources[0], dest)
	}
	for _, s := range o.Sources {
		if err := add(s, path.Join(dest, filepath.Base(filepath.Clean(s)))); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// add plans src (a file, a directory and what it holds, or a link) to
// dest. follow says whether a link here is followed; ancestors are the
// directories above src, to refuse a loop of links with Follow.
func (p *putPlan) add(src, dest string, lk putLinks, follow bool, ancestors []os.FileInfo) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		switch {
		case follow:
			if fi, err = os.Stat(src); err != nil {
				return fmt.Errorf("%s: following the link: %w", src, err)
			}
		case lk.keep:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			p.jobs = append(p.jobs, putJob{src: src, dest: dest, link: target, mtime: fi.ModTime()})
			return nil
		default:
			p.skipped = append(p.skipped, src)
			return nil
		}
	}
	switch {
	case fi.Mode().IsRegular(), !fi.IsDir() && ancestors == nil:
		// A source named on the command line (a pipe, a device) is read
		// like a file, as cp without -r reads it.
		p.jobs = append(p.jobs, putJob{src: src, dest: dest, size: fi.Size(), mtime: fi.ModTime(), perm: fi.Mode().Perm()})
	case fi.IsDir():
		for _, up := range ancestors {
			if os.SameFile(up, fi) {
				return fmt.Errorf("%s: a link loop (it leads back to a directory above it)", src)
			}
		}
		p.jobs = append(p.jobs, putJob{src: src, dest: dest, dir: true, mtime: fi.ModTime()})
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := p.add(filepath.Join(src, e.Name()), path.Join(dest, e.Name()), lk, lk.follow, append(ancestors, fi)); err != nil {
				return err
			}
		}
	default:
		p.warn(fmt.Sprintf("%s: skipped: not a regular file, directory or symbolic link", src))
	}
	return nil
}

// skippedLinks is Put's error when links were not copied.
func skippedLinks(fstype string, links []string) error {
	if len(links) == 0 {
		return nil
	}
	return kind(BadOperand, fmt.Errorf("%d symbolic links not copied (%s has none; -L copies what they point to):\n  %s",
		len(links), fstype, strings.Join(links, "\n  ")))
}

// CountSourceFiles counts the files Put would copy from srcs (those
// below a directory too; "-" is one), as Put counts them in what it
// says when interrupted.
func CountSourceFiles(srcs []string) int {
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
