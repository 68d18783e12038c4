package keep

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// Want says which kept unlock a command can use: with Hidden only that
// of a hidden volume, with ProtectHidden only that of an outer volume
// unlocked with its hidden volume protected.
type Want struct {
	Hidden, ProtectHidden bool
}

// Lookup returns the entry kept for the file at path when it is of the
// wanted kind, or nil (the caller then opens the volume with
// credentials, which also reports a file that cannot be read). The
// caller wipes the entry.
func Lookup(st Store, path string, w Want) *Entry {
	id, err := volume.FileIDOf(path)
	if err != nil {
		return nil
	}
	e, err := st.Get(id)
	if err != nil {
		return nil
	}
	if w.Hidden && !e.Hidden || w.ProtectHidden && e.Hidden {
		e.Wipe()
		return nil
	}
	return e
}

// Reopen opens the volume at path from the keys kept in e. It returns an
// error wrapping ErrNotFound when e cannot serve w (a snapshot that does
// not decode, or one without the hidden volume's protection for
// w.ProtectHidden), and, having removed e from st, one wrapping
// volume.ErrNotSameVolume when path is no longer the file that was
// unlocked (replaced, copied, or given a new header).
func (e *Entry) Reopen(ctx context.Context, st Store, path string, w Want, o volume.Options) (*volume.Volume, error) {
	var snap volume.Snapshot
	if err := snap.UnmarshalBinary(e.Secret); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	defer snap.Wipe()
	if w.ProtectHidden && snap.ProtectedSize == 0 {
		return nil, fmt.Errorf("%w with the hidden volume protected", ErrNotFound)
	}
	v, err := volume.Reopen(ctx, path, &snap, o)
	if err != nil {
		if errors.Is(err, volume.ErrNotSameVolume) {
			st.Delete(e.File)
		}
		return nil, err
	}
	return v, nil
}

// Keep puts the keys of v, opened from path, into st until expires. snap
// is v's snapshot; the caller takes it (v.Snapshot) and wipes it.
func Keep(st Store, path string, v *volume.Volume, snap *volume.Snapshot, expires time.Time) error {
	secret, err := snap.MarshalBinary()
	if err != nil {
		return err
	}
	info := v.Info()
	e := &Entry{Volume: path, File: snap.Identity.File, Format: info.Format, Hidden: info.Hidden, Expires: expires, Secret: secret}
	defer e.Wipe()
	if err := st.Put(e); err != nil {
		return fmt.Errorf("keeping the volume unlocked in %s: %w", st.Where(), err)
	}
	return nil
}

// Extend puts e back with a new expiry time, after checking that it
// still opens the file at path. Unlike Reopen it leaves an entry that no
// longer fits in place: the next open of the volume reports and removes
// it.
func Extend(st Store, e *Entry, path string, expires time.Time) error {
	var snap volume.Snapshot
	if err := snap.UnmarshalBinary(e.Secret); err != nil {
		return err
	}
	defer snap.Wipe()
	v, err := volume.Reopen(context.Background(), path, &snap, volume.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	v.Close()
	e.Expires = expires
	return st.Put(e)
}

// Lock removes the entry of the file at path, or, when the file is gone
// or another file took its place, the entries recorded under its path,
// and reports whether there was one.
func Lock(st Store, path string) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	if id, err := volume.FileIDOf(abs); err == nil {
		if ok, err := st.Delete(id); ok || err != nil {
			return ok, err
		}
	}
	es, err := st.List()
	if err != nil {
		return false, err
	}
	found := false
	for _, e := range es {
		if e.Volume == abs {
			if ok, err := st.Delete(e.File); err != nil {
				return found, err
			} else if ok {
				found = true
			}
		}
	}
	return found, nil
}
