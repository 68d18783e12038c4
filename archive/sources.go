package archive

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

	"github.com/cryptvol/cryptvol/internal/ctxio"
)

// Adding local files: the paths a user names become Sources (each file,
// and a directory with everything under it), and AddSources adds them in
// one commit, as tar would.

// Source is one local file or directory to add, with its member name.
type Source struct {
	Path string      // the local path; "-" is AddSourcesOptions.Stdin
	Name string      // the member name
	Info fs.FileInfo // from Lstat: symbolic links are not followed; nil for "-"
}

// Why Sources refuses a path (in a *SourceError).
var (
	// ErrIsDir: a directory named without recursion.
	ErrIsDir = errors.New("is a directory")
	// ErrNeedsName: a path that yields no member name (standard input, or
	// a file such as "/" cleaned to nothing); give it one.
	ErrNeedsName = errors.New("needs a member name")
)

// SourceError is a path Sources refuses: Err is ErrIsDir, ErrNeedsName or
// ErrInvalidName (Name is then the name it would have had).
type SourceError struct {
	Path, Name string
	Err        error
}

func (e *SourceError) Error() string {
	if errors.Is(e.Err, ErrInvalidName) {
		return fmt.Sprintf("%s: %v %q", e.Path, e.Err, e.Name)
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *SourceError) Unwrap() error { return e.Err }

// MemberName turns a local path into a member name: slashes, cleaned,
// without a volume name or leading '/' and '../' elements (as tar does).
func MemberName(p string) string {
	p = filepath.ToSlash(strings.TrimPrefix(p, filepath.VolumeName(p)))
	p = path.Clean("/" + p)
	return strings.TrimPrefix(p, "/")
}

// Sources expands paths into what AddSources adds: each file, and with
// recursive each directory and everything under it, in lexical order. A
// member is named by MemberName of its path; rename, if not empty, names
// the single path instead (and is required for "-", standard input).
// The contents of "." or "/" are named from there.
func Sources(paths []string, rename string, recursive bool) ([]Source, error) {
	var out []Source
	for _, p := range paths {
		if p == "-" {
			if rename == "" {
				return nil, &SourceError{Path: p, Err: ErrNeedsName}
			}
			out = append(out, Source{Path: "-", Name: rename})
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		base := MemberName(p)
		if rename != "" {
			base = rename
		}
		if base == "" && !fi.IsDir() {
			return nil, &SourceError{Path: p, Err: ErrNeedsName}
		}
		if base != "" && !ValidName(base) {
			return nil, &SourceError{Path: p, Name: base, Err: ErrInvalidName}
		}
		if fi.IsDir() && !recursive {
			return nil, &SourceError{Path: p, Name: base, Err: ErrIsDir}
		}
		if !fi.IsDir() {
			out = append(out, Source{Path: p, Name: base, Info: fi})
			continue
		}
		err = filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(p, fp)
			if err != nil {
				return err
			}
			name := path.Join(base, filepath.ToSlash(rel))
			if name == "." {
				return nil // "." or "/" itself: its contents are named from it
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out = append(out, Source{Path: fp, Name: name, Info: info})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AddSourcesOptions say how AddSources adds.
type AddSourcesOptions struct {
	Replace bool      // replace members that exist (AddOptions.Replace)
	Stdin   io.Reader // the contents of the source "-"
	// Skipped hears of a source that is neither a regular file nor a
	// directory (a symbolic link, a device...), which is not added; kind
	// says what it is, as FileKind does.
	Skipped func(s Source, kind string)
}

// AddSourcesError is why AddSources stopped; the batch was rolled back.
type AddSourcesError struct {
	Done   int     // sources added before it stopped
	Source *Source // the source it stopped in; nil if it stopped between two (ctx)
	Err    error
}

func (e *AddSourcesError) Error() string {
	if e.Source == nil {
		return fmt.Sprintf("stopped after %d sources: %v", e.Done, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Source.Path, e.Err)
}

func (e *AddSourcesError) Unwrap() error { return e.Err }

// AddSources adds the sources in one batch and commits it, keeping
// modification times and permissions. If anything fails before the
// commit, the batch is rolled back (the archive is unchanged) and the
// error is an *AddSourcesError; ctx stops it between sources and inside
// one. A commit's error is returned as it is.
func (a *Archive) AddSources(ctx context.Context, srcs []Source, o *AddSourcesOptions) error {
	if len(srcs) == 0 {
		return nil
	}
	if o == nil {
		o = &AddSourcesOptions{}
	}
	opt := &AddOptions{Replace: o.Replace}
	for i := range srcs {
		if err := ctx.Err(); err != nil {
			a.Rollback()
			return &AddSourcesError{Done: i, Err: err}
		}
		if err := a.addSource(ctx, srcs[i], opt, o); err != nil {
			a.Rollback()
			return &AddSourcesError{Done: i, Source: &srcs[i], Err: err}
		}
	}
	return a.Commit()
}

func (a *Archive) addSource(ctx context.Context, s Source, opt *AddOptions, o *AddSourcesOptions) error {
	if s.Path == "-" {
		return a.Add(s.Name, ctxio.Reader(ctx, o.Stdin), Info{ModTime: time.Now(), Mode: 0o644}, opt)
	}
	info := Info{ModTime: s.Info.ModTime(), Mode: s.Info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
	switch t := s.Info.Mode().Type(); {
	case t == fs.ModeDir:
		info.Mode |= fs.ModeDir
		return a.Add(s.Name, nil, info, opt)
	case t != 0:
		if o.Skipped != nil {
			o.Skipped(s, FileKind(t))
		}
		return nil
	}
	f, err := os.Open(s.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	return a.Add(s.Name, ctxio.Reader(ctx, f), info, opt)
}

// FileKind names the type of a file that is neither regular nor a
// directory, for a message.
func FileKind(t fs.FileMode) string {
	switch {
	case t&fs.ModeSymlink != 0:
		return "symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "named pipe"
	case t&fs.ModeSocket != 0:
		return "socket"
	case t&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}
