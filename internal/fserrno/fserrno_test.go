package fserrno_test

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/conformance"
	"github.com/cryptvol/cryptvol/internal/fserrno"
	"github.com/cryptvol/cryptvol/volume"
)

var posix = fserrno.Numbers[syscall.Errno]{
	NOENT: syscall.ENOENT, EXIST: syscall.EEXIST, NOTEMPTY: syscall.ENOTEMPTY,
	ISDIR: syscall.EISDIR, NOTDIR: syscall.ENOTDIR, INVAL: syscall.EINVAL,
	NOSPC: syscall.ENOSPC, FBIG: syscall.EFBIG, ROFS: syscall.EROFS,
	PERM: syscall.EPERM, ACCES: syscall.EACCES,
}

// TestRealErrors maps the errors that real FAT, exFAT and ext4
// filesystems return, through package filesystem (classified) and from
// package fat directly (as package mount gets them).
func TestRealErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		img  func(t *testing.T) string
	}{
		{"FAT16", func(t *testing.T) string { return conformance.FATImage(t, "16", 9<<20, nil) }},
		{"exFAT", func(t *testing.T) string { return conformance.ExFATImage(t, 4<<20, nil) }},
		{"ext4", func(t *testing.T) string { return conformance.Ext4Image(t, 4<<20, nil, false) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := conformance.OpenImage(t, c.img(t), true).(filesystem.Writer)
			defer w.Close()
			if err := w.Mkdir("/d"); err != nil {
				t.Fatal(err)
			}
			f, err := w.Create("/d/f")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			want := func(what string, err error, e syscall.Errno) {
				t.Helper()
				got, ok := fserrno.Of(err, &posix)
				if !ok || got != e {
					t.Errorf("%s: %v maps to %v (known %v), want %v", what, err, got, ok, e)
				}
			}
			_, err = w.Stat("/missing")
			want("Stat of a missing name", err, syscall.ENOENT)
			want("Mkdir of an existing name", w.Mkdir("/d"), syscall.EEXIST)
			want("Remove of a non-empty directory", w.Remove("/d"), syscall.ENOTEMPTY)
			_, err = w.Create("/d")
			want("Create over a directory", err, syscall.EISDIR)
			_, err = w.Create("/d/f/x")
			if got, _ := fserrno.Of(err, &posix); got != syscall.ENOTDIR && got != syscall.ENOENT {
				t.Errorf("Create under a file: %v maps to %v, want ENOTDIR or ENOENT", err, got)
			}
		})
	}
	for _, c := range []struct {
		err error
		e   syscall.Errno
	}{
		{fmt.Errorf("put: %w", fat.ErrNotEmpty), syscall.ENOTEMPTY},
		{fmt.Errorf("write: %w", fat.ErrNoSpace), syscall.ENOSPC},
		{fmt.Errorf("write: %w", fat.ErrFileTooLarge), syscall.EFBIG},
		{fmt.Errorf("write: %w", volume.ErrProtected), syscall.EPERM},
		{&os.PathError{Op: "open", Path: "x", Err: os.ErrPermission}, syscall.EACCES},
	} {
		if got, ok := fserrno.Of(c.err, &posix); !ok || got != c.e {
			t.Errorf("%v maps to %v (known %v), want %v", c.err, got, ok, c.e)
		}
	}
	if _, ok := fserrno.Of(errors.New("something else"), &posix); ok {
		t.Error("an unknown error is known to the table")
	}
}
