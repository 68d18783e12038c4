package webdav

import (
	"errors"
	"io/fs"
	"os"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// osError rewrites err so that os.IsNotExist, os.IsExist and
// os.IsPermission, which x/net/webdav uses to pick status codes and which
// do not follow wrapped chains, recognise the filesystem's errors.
func osError(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var kind error
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, filesystem.ErrNotDir):
		kind = os.ErrNotExist
	case errors.Is(err, fs.ErrExist):
		kind = os.ErrExist
	case errors.Is(err, fs.ErrPermission), errors.Is(err, filesystem.ErrReadOnly),
		errors.Is(err, volume.ErrProtected): // 403, as EPERM in a mount
		kind = os.ErrPermission
	default:
		return err
	}
	// os.IsNotExist and the like compare the PathError's Err with ==, so
	// it must be the bare sentinel (the message names op and path).
	return &os.PathError{Op: op, Path: name, Err: kind}
}
