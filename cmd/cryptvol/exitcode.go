package main

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/cryptvol/cryptvol/archive"
	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// Exit codes are part of the command-line contract (README "Exit codes").
const (
	exitOK        = 0
	exitUsage     = 1 // bad flags or arguments
	exitAuth      = 2 // wrong password/keyfile/PIM, or not a recognised volume
	exitDamaged   = 3 // damaged or unsupported volume
	exitIO        = 4 // I/O error
	exitDestroy   = 5 // refused: it would destroy data
	exitCancelled = 130
	// exitNoTool: the program a filesystem needs (its mkfs or its
	// checker) is not installed. Not 3: nothing was found damaged.
	exitNoTool = 6

	// exitRepaired is fsck's 1, as fsck.fat's and e2fsck's: problems were
	// found and all of them repaired.
	exitRepaired = 1
)

// cliError carries an exit code with the message printed for it.
type cliError struct {
	code     int
	err      error
	notUsage bool // an exit 1 that is not a usage error (fsck's exitRepaired)
}

func (e *cliError) Error() string { return e.err.Error() }
func (e *cliError) Unwrap() error { return e.err }

// usageError marks a mistake in how the command was called.
func usageError(err error) error { return &cliError{code: exitUsage, err: err} }

// withCode attaches an explicit exit code.
func withCode(code int, err error) error { return &cliError{code: code, err: err} }

// repairedAll is fsck's result when everything it found was repaired.
func repairedAll(err error) error { return &cliError{code: exitRepaired, err: err, notUsage: true} }

// volumePathError marks the error of an operation on a path inside the
// volume that the command line named (ls's, get's and rm's PATH, put's
// destination, mkdir's and mv's operands), so that exitCodeFor tells "that
// path names nothing" (the command line is wrong: exit 1) from a missing
// local file or volume (an I/O error: exit 4) on every filesystem, though
// both are fs.ErrNotExist.
type volumePathError struct{ err error }

func (e *volumePathError) Error() string { return e.err.Error() }
func (e *volumePathError) Unwrap() error { return e.err }

// inVolume marks err as an error about a path inside the volume.
func inVolume(err error) error {
	var vp *volumePathError
	if err == nil || errors.As(err, &vp) {
		return err
	}
	return &volumePathError{err}
}

// wrongOperand reports whether err says a path named on the command line
// is wrong for the filesystem inside the volume: it names nothing, it
// exists (mkdir), or it holds a character the filesystem cannot store.
// Nothing was lost or failed to read: exit 1, without the usage hint.
func wrongOperand(err error) bool {
	if errors.Is(err, filesystem.ErrInvalidName) {
		return true
	}
	var vp *volumePathError
	return errors.As(err, &vp) && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist))
}

// usageHint reports whether err deserves "run 'cryptvol help CMD'".
func usageHint(err error) bool {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce.code == exitUsage && !ce.notUsage
	}
	return exitCodeFor(err) == exitUsage && !wrongOperand(err)
}

// exitCodeFor maps an error to the documented exit code.
func exitCodeFor(err error) int {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce.code
	}
	switch {
	case errors.Is(err, context.Canceled):
		return exitCancelled
	case errors.Is(err, volume.ErrInvalidOption), errors.Is(err, archive.ErrInvalidOption):
		// An option the library refused (a cipher, size, PIM, keyslot
		// number, KDF cost): the command line is wrong.
		return exitUsage
	case wrongOperand(err):
		return exitUsage
	case errors.Is(err, volume.ErrWrongPassword):
		return exitAuth
	case errors.Is(err, volume.ErrDamaged), errors.Is(err, volume.ErrUnsupported):
		return exitDamaged
	case errors.Is(err, volume.ErrProtected), errors.Is(err, volume.ErrReserved), errors.Is(err, volume.ErrExists), errors.Is(err, fs.ErrExist):
		return exitDestroy
	case errors.Is(err, volume.ErrReadOnly), errors.Is(err, volume.ErrLocked),
		errors.Is(err, volume.ErrHeaderChanged), errors.Is(err, volume.ErrForeignBackup):
		return exitDestroy
	}
	var pe *fs.PathError
	if errors.As(err, &pe) || errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
		return exitIO
	}
	return exitIO
}
