package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// putLinks is how put treats symbolic links, as cp -r does.
type putLinks struct {
	// follow (-L) copies what every link points to.
	follow bool
	// recursive (-r): a link given as a source is a link too, as inside
	// a tree; without -r it is followed (cp without -r does the same).
	recursive bool
	// keep: the filesystem holds symbolic links (ext2/3/4, NTFS); on FAT
	// and exFAT, links that are not followed are listed as not copied.
	keep bool
}

// putPlan is what put will do: the jobs in order, and the links it
// cannot copy (FAT and exFAT without -L).
type putPlan struct {
	jobs    []putJob
	skipped []string
}

// planPut lists what put will write: the sources as cp would copy them
// to dest, directories before what they hold.
func planPut(a *app, stat func(string) (fs.FileInfo, error), srcs []string, dest string, into bool, lk putLinks) (*putPlan, error) {
	st, err := stat(dest)
	destIsDir := err == nil && st.IsDir()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fsError(err)
	}
	p := &putPlan{}
	if into && !destIsDir {
		if err == nil {
			return nil, usageError(fmt.Errorf("%s/ is a file in the volume, not a directory", dest))
		}
		// "DIR/" that does not exist yet: made, then filled.
		p.jobs = append(p.jobs, putJob{src: dest, dest: dest, dir: true})
		destIsDir = true
	}
	add := func(src, target string) error {
		if src == "-" {
			p.jobs = append(p.jobs, putJob{src: "standard input", dest: target, mtime: time.Now(), in: a.stdin})
			return nil
		}
		return p.add(a, src, target, lk, lk.follow || !lk.recursive, nil)
	}
	if !destIsDir {
		// Only "put VOLUME file /newname" may name a file that does not
		// exist yet (or replace one, with --force).
		if len(srcs) != 1 {
			return nil, usageError(fmt.Errorf("%s is not a directory in the volume", dest))
		}
		return p, add(srcs[0], dest)
	}
	for _, s := range srcs {
		if err := add(s, path.Join(dest, filepath.Base(filepath.Clean(s)))); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// add plans src (a file, a directory and what it holds, or a link) to
// dest. follow says whether a link here is followed; ancestors are the
// directories above src, to refuse a loop of links with -L.
func (p *putPlan) add(a *app, src, dest string, lk putLinks, follow bool, ancestors []os.FileInfo) error {
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
			if err := p.add(a, filepath.Join(src, e.Name()), path.Join(dest, e.Name()), lk, lk.follow, append(ancestors, fi)); err != nil {
				return err
			}
		}
	default:
		a.warnf("%s: skipped: not a regular file, directory or symbolic link", src)
	}
	return nil
}

// checkNames refuses, before anything is written or a driver started,
// every destination name the filesystem cannot store, naming the source
// the user gave for it (not a temporary file).
func checkNames(fstype string, jobs []putJob) error {
	for _, j := range jobs {
		if j.dest == "/" {
			continue
		}
		if err := filesystem.ValidateName(fstype, path.Base(j.dest)); err != nil {
			return badOperand(fmt.Errorf("%s cannot go into the volume as %s: %s; nothing was written", j.src, shortPath(j.dest), nameReason(err, path.Base(j.dest))))
		}
	}
	return nil
}

// checkPathNames checks every component of the volume path p.
func checkPathNames(fstype, p string) error {
	for _, c := range strings.Split(strings.Trim(volPath(p), "/"), "/") {
		if c == "" {
			continue
		}
		if err := filesystem.ValidateName(fstype, c); err != nil {
			return badOperand(fmt.Errorf("%s: %s; nothing was written", shortPath(p), nameReason(err, c)))
		}
	}
	return nil
}

// nameReason is a ValidateName error with a long name shortened.
func nameReason(err error, name string) string {
	return strings.ReplaceAll(err.Error(), strconv.Quote(name), strconv.Quote(shortPath(name)))
}

// shortPath keeps a very long path readable in a message.
func shortPath(p string) string {
	if len(p) <= 80 {
		return p
	}
	return p[:40] + "..." + p[len(p)-30:]
}

// skippedLinks is put's error when links were not copied.
func skippedLinks(fstype string, links []string) error {
	if len(links) == 0 {
		return nil
	}
	return badOperand(fmt.Errorf("%d symbolic links not copied (%s has none; -L copies what they point to):\n  %s",
		len(links), fstype, strings.Join(links, "\n  ")))
}
