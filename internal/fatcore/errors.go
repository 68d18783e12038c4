package fatcore

import iofs "io/fs"

// PathErr wraps err in an *fs.PathError, the form os and io/fs use; nil
// stays nil so callers can wrap whatever an operation returned.
func PathErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	return &iofs.PathError{Op: op, Path: path, Err: err}
}
