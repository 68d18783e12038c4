package main

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/fsops"
)

// TestOpErrorCodes: each Kind of fsops' errors gets the exit code (and
// usage hint) the commands gave it before their logic moved to fsops,
// with the message unchanged.
func TestOpErrorCodes(t *testing.T) {
	msg := errors.New("the message")
	k := func(kind fsops.Kind, err error) error { return &fsops.Error{Kind: kind, Err: err} }
	for _, c := range []struct {
		err  error
		code int
		hint bool
	}{
		{k(fsops.BadUsage, msg), exitUsage, true},
		{k(fsops.BadOperand, msg), exitUsage, false},
		{k(fsops.WouldDestroy, msg), exitDestroy, false},
		{k(fsops.NoRoom, msg), exitIO, false},
		{k(fsops.Interrupted, msg), exitCancelled, false},
		{k(fsops.Failed, fmt.Errorf("x: %w", filesystem.ErrCorrupt)), exitDamaged, false},
		{k(fsops.Failed, k(fsops.InVolume, &fs.PathError{Op: "create", Path: "/a", Err: fs.ErrNotExist})), exitUsage, false},
		{msg, exitIO, false},
	} {
		err := opError(c.err)
		if code := exitCodeFor(err); code != c.code || usageHint(err) != c.hint {
			t.Errorf("%#v: exit %d, hint %v; want %d, %v", c.err, code, usageHint(err), c.code, c.hint)
		}
		if err.Error() != c.err.Error() {
			t.Errorf("the message changed: %q, was %q", err, c.err)
		}
	}
}
