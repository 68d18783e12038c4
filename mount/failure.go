package mount

import "errors"

// Kind says what a failure of the mount, unmount and serve steps means,
// so that a caller (the command line) can turn it into its exit status
// without this package knowing the numbers.
type Kind int

const (
	// KindIO: the system failed (FUSE, a mount, a file, a process).
	KindIO Kind = iota + 1
	// KindUnservable: what the volume holds cannot be served the way
	// asked (no filesystem served as files, no driver for it).
	KindUnservable
	// KindInUse: the volume is mounted already; mounting it again would
	// destroy it.
	KindInUse
	// KindUsage: the request was wrong (not a mount point, not mounted).
	KindUsage
	// KindChild: a helper process failed; Code is the status it chose
	// (DaemonError.Code).
	KindChild
)

// Failure is an error of this package with its Kind; its message is the
// wrapped error's.
type Failure struct {
	Kind Kind
	Code int // KindChild only
	Err  error
}

func (f *Failure) Error() string { return f.Err.Error() }
func (f *Failure) Unwrap() error { return f.Err }

// fail wraps err as a failure of kind k (nil stays nil).
func fail(k Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Failure{Kind: k, Err: err}
}

// childFailure is a helper's reported failure (a *DaemonError in err),
// carried with the status it chose; ok is false if err is not one.
func childFailure(err error) (error, bool) {
	var de *DaemonError
	if !errors.As(err, &de) {
		return err, false
	}
	return &Failure{Kind: KindChild, Code: de.Code, Err: errors.New(de.Msg)}, true
}
