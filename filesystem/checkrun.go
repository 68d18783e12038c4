package filesystem

import (
	"errors"
	"fmt"
	"io"
)

// ErrNoChecker is wrapped when a filesystem has no built-in checker
// (only FAT and exFAT have one; the others are checked by their own
// programs, package filesystem/external).
var ErrNoChecker = errors.New("no built-in checker")

// CheckOpenError is the error of opening the filesystem for a check or a
// repair: nothing was checked.
type CheckOpenError struct{ Err error }

func (e *CheckOpenError) Error() string { return e.Err.Error() }
func (e *CheckOpenError) Unwrap() error { return e.Err }

// CheckOptions say how CheckAndRepair runs.
type CheckOptions struct {
	// Repair repairs what is found, then checks again.
	Repair bool
	// Dirty, if set, hears that a FAT filesystem opened for a check
	// without repair is marked dirty (its last session did not end
	// cleanly).
	Dirty func()
}

// CheckAndRepair checks the filesystem of type typ (as fsprobe names it)
// in the size bytes of dev with its built-in checker (Checker). A repair
// opens the filesystem as found (an interrupted session is not recovered
// first: the check reports it and the repair completes it), and is
// followed by a fresh check of what is on disk, unless the repair's own
// report carries one (AfterRepair). after is that check, or nil (no
// repair, or carried). Errors: *CheckOpenError when the filesystem does
// not open, ErrNoChecker wrapped when it has no checker, else the
// checker's.
func CheckAndRepair(typ string, dev io.ReaderAt, size int64, o CheckOptions) (rep, after CheckReport, carried bool, err error) {
	check := func(repair bool) (CheckReport, error) {
		fsys, err := OpenAs(typ, dev, size, Options{Writable: repair, NoRecovery: repair})
		if err != nil {
			return nil, &CheckOpenError{err}
		}
		if d, ok := fsys.(Dirtier); ok && !repair && typ == "vfat" && d.Dirty() && o.Dirty != nil {
			o.Dirty()
		}
		ck, ok := fsys.(Checker)
		if !ok {
			fsys.Close()
			return nil, fmt.Errorf("%w for %s", ErrNoChecker, typ)
		}
		rep, err := ck.Check(repair)
		if cerr := fsys.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		return rep, nil
	}
	rep, err = check(o.Repair)
	if err != nil {
		return nil, nil, false, err
	}
	after, carried = AfterRepair(rep)
	if o.Repair && !rep.Clean() && !carried {
		if after, err = check(false); err != nil {
			return nil, nil, false, err
		}
	}
	return rep, after, carried, nil
}
