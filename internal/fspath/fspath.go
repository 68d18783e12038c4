// Package fspath resolves slash-separated paths inside a filesystem image
// one component at a time, following symbolic links the POSIX way (inside
// the image: an absolute target starts again at the image's root). The
// read-only filesystem readers (ext4, ntfs) share it so that they agree on
// what "a/b/../c" and a link in the middle of a path mean.
package fspath

import (
	"errors"
	"io/fs"
	"strings"
)

// MaxLinks is how many symbolic links one resolution may follow (Linux's
// limit) before it fails with ErrLoop.
const MaxLinks = 40

// ErrLoop is returned when resolving a path follows more than MaxLinks
// symbolic links.
var ErrLoop = errors.New("too many levels of symbolic links")

// Ops are what a filesystem provides for resolution. Lookup finds one name
// in a directory node (it returns an error wrapping fs.ErrNotExist when it
// is absent and fs.ErrInvalid-free errors otherwise; it is only called on
// nodes IsDir says are directories). Link reports whether n is a symbolic
// link and, if so, its target.
type Ops[N any] interface {
	Lookup(dir N, name string) (N, error)
	IsDir(n N) bool
	Link(n N) (target string, isLink bool, err error)
}

// ErrNotDir is wrapped when a component other than the last names
// something that is not a directory; ErrIsDir when a file operation (a
// read) is attempted on a directory.
var (
	ErrNotDir = errors.New("not a directory")
	ErrIsDir  = errors.New("is a directory")
)

// Resolve walks name from root. Symbolic links in the middle of the path
// are always followed; the last component is followed only when follow is
// set (Stat versus Lstat). ".." never climbs above root. Errors are bare
// (the caller wraps them in an fs.PathError with its operation).
func Resolve[N any](ops Ops[N], root N, name string, follow bool) (N, error) {
	stack := []N{root}
	rest := split(name)
	links := 0
	for len(rest) > 0 {
		elem := rest[0]
		rest = rest[1:]
		switch elem {
		case ".":
			continue
		case "..":
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		cur := stack[len(stack)-1]
		if !ops.IsDir(cur) {
			var zero N
			return zero, ErrNotDir
		}
		n, err := ops.Lookup(cur, elem)
		if err != nil {
			var zero N
			return zero, err
		}
		if len(rest) > 0 || follow {
			target, isLink, err := ops.Link(n)
			if err != nil {
				var zero N
				return zero, err
			}
			if isLink {
				if links++; links > MaxLinks {
					var zero N
					return zero, ErrLoop
				}
				if strings.HasPrefix(target, "/") {
					stack = stack[:1]
				}
				rest = append(split(target), rest...)
				continue
			}
		}
		stack = append(stack, n)
	}
	return stack[len(stack)-1], nil
}

func split(name string) []string {
	var out []string
	for _, p := range strings.Split(name, "/") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// PathError wraps err for op on name, as io/fs does.
func PathError(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}
