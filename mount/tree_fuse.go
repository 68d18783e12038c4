//go:build linux || darwin

package mount

import (
	"errors"
	"io"
	iofs "io/fs"
	"time"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
)

// filesTree is what a files mount serves: package fat's or package exfat's
// filesystem (whose APIs are the same), behind one interface.
type filesTree interface {
	Stat(name string) (iofs.FileInfo, error)
	ReadDir(name string) ([]iofs.DirEntry, error)
	OpenFile(name string, flag int, perm iofs.FileMode) (filesFile, error)
	Mkdir(name string) error
	Remove(name string) error
	Rename(oldpath, newpath string) error
	Chtimes(name string, atime, mtime time.Time) error
	// SetReadOnly sets or clears the read-only attribute.
	SetReadOnly(name string, readOnly bool) error
	// Space is the allocation unit and the numbers of units in all and
	// free.
	Space() (unit int, total, free uint64)
	Sync() error
	Close() error
}

// filesFile is an open file of a filesTree.
type filesFile interface {
	io.ReaderAt
	io.WriterAt
	Stat() (iofs.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
	Name() string
}

// openTree opens the FAT or exFAT filesystem in v. Errors wrap
// fat.ErrNotFAT when neither is there.
func openTree(v Volume, readOnly bool) (filesTree, error) {
	ffs, err := fat.OpenWithOptions(v, v.Size(), fat.Options{ReadOnly: readOnly})
	if err == nil {
		return fatFilesTree{ffs}, nil
	}
	if !errors.Is(err, fat.ErrNotFAT) && !errors.Is(err, fat.ErrTooSmall) {
		return nil, err
	}
	x, xerr := exfat.OpenWithOptions(v, v.Size(), exfat.Options{ReadOnly: readOnly})
	if xerr == nil {
		return exfatFilesTree{x}, nil
	}
	if !errors.Is(xerr, exfat.ErrNotExFAT) {
		return nil, xerr
	}
	return nil, err
}

type fatFilesTree struct{ *fat.FS }

func (t fatFilesTree) Stat(name string) (iofs.FileInfo, error) {
	fi, err := t.FS.Stat(name)
	if err != nil {
		return nil, err
	}
	return fi, nil
}

func (t fatFilesTree) OpenFile(name string, flag int, perm iofs.FileMode) (filesFile, error) {
	f, err := t.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (t fatFilesTree) SetReadOnly(name string, readOnly bool) error {
	fi, err := t.FS.Stat(name)
	if err != nil {
		return err
	}
	a := fi.Attributes() &^ fat.AttrDir
	b := a &^ fat.AttrReadOnly
	if readOnly {
		b |= fat.AttrReadOnly
	}
	if a == b {
		return nil
	}
	return t.FS.SetAttributes(name, b)
}

func (t fatFilesTree) Space() (int, uint64, uint64) {
	s := t.FS.Statfs()
	return s.ClusterSize, uint64(s.TotalClusters), uint64(s.FreeClusters)
}

type exfatFilesTree struct{ *exfat.FS }

func (t exfatFilesTree) Stat(name string) (iofs.FileInfo, error) {
	fi, err := t.FS.Stat(name)
	if err != nil {
		return nil, err
	}
	return fi, nil
}

func (t exfatFilesTree) OpenFile(name string, flag int, perm iofs.FileMode) (filesFile, error) {
	f, err := t.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (t exfatFilesTree) SetReadOnly(name string, readOnly bool) error {
	fi, err := t.FS.Stat(name)
	if err != nil {
		return err
	}
	a := fi.Attributes() &^ exfat.AttrDir
	b := a &^ exfat.AttrReadOnly
	if readOnly {
		b |= exfat.AttrReadOnly
	}
	if a == b {
		return nil
	}
	return t.FS.SetAttributes(name, b)
}

func (t exfatFilesTree) Space() (int, uint64, uint64) {
	s := t.FS.Statfs()
	return s.ClusterSize, uint64(s.TotalClusters), uint64(s.FreeClusters)
}
