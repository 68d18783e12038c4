package fsops

import (
	"context"
	"io"
	"path"

	"github.com/cryptvol/cryptvol/internal/ctxio"
)

// Kind says what an operation's error is, so that a front end can give it
// its exit status; the message is the error's own, ready to print.
type Kind int

const (
	// Failed is an error of the filesystem (filesystem.Err* tell more).
	Failed Kind = iota + 1
	// InVolume marks an error about a path inside the volume, so that
	// "that path names nothing" is told from a missing local file.
	InVolume
	// BadUsage: the operation was asked for wrongly (a directory
	// without recursive, the root removed).
	BadUsage
	// BadOperand: an operand is wrong for the filesystem (a name it
	// cannot store, a link it has no room for); nothing was written.
	BadOperand
	// WouldDestroy: refused, it would replace or lose data.
	WouldDestroy
	// NoRoom: the files cannot fit; nothing was written.
	NoRoom
	// Interrupted: stopped by the context; the message says how far the
	// operation got.
	Interrupted
)

// Error is an operation's error of a Kind.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// kind marks err (nil stays nil).
func kind(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: k, Err: err}
}

// volPath is a path of the volume, absolute and clean.
func volPath(p string) string { return path.Clean("/" + p) }

// CopyFunc copies a file from src to dst (size is its size where known,
// else 0), stopping once ctx is cancelled (with ctx's error); front ends
// pass their tuned copy.
type CopyFunc func(ctx context.Context, dst io.Writer, src io.Reader, size int64) (int64, error)

// plainCopy is the CopyFunc used when none is given.
func plainCopy(ctx context.Context, dst io.Writer, src io.Reader, _ int64) (int64, error) {
	return ctxio.Copy(ctx, dst, src)
}
