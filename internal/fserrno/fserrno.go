// Package fserrno is the one table that turns the errors of cryptvol's
// filesystems (package filesystem's sentinels, the fat, exfat and ext4
// packages' own, io/fs's, and the volume layer's) into POSIX error
// numbers, for every front end that answers with an errno: the FUSE mount
// (package mount, whose numbers are syscall.Errno) and the cgofuse
// adapter behind WinFsp (package mount/cgofs, whose numbers are
// cgofuse's, which differ from syscall's on Windows). Each front end
// spells the numbers of its platform in a Numbers; which error means
// which number is decided here only.
package fserrno

import (
	"errors"
	iofs "io/fs"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
)

// Numbers are one platform's values of the errnos the table uses.
type Numbers[E any] struct {
	NOENT, EXIST, NOTEMPTY, ISDIR, NOTDIR, INVAL, NOSPC, FBIG, ROFS, PERM, ACCES E
}

// kind picks one field of a Numbers.
type kind int

const (
	noent kind = iota
	exist
	notempty
	isdir
	notdir
	inval
	nospc
	fbig
	rofs
	perm
	acces
)

// table is searched in order: the first error in err's chain wins. A file
// too large for FAT's 4 GiB or exFAT's limit is EFBIG, before ErrNoSpace
// (which filesystem.ErrFileTooLarge also is).
var table = []struct {
	err  error
	kind kind
}{
	{iofs.ErrNotExist, noent},
	{iofs.ErrExist, exist},
	{filesystem.ErrNotEmpty, notempty},
	{filesystem.ErrIsDir, isdir},
	{filesystem.ErrNotDir, notdir},
	{filesystem.ErrInvalidName, inval},
	{filesystem.ErrFileTooLarge, fbig},
	{filesystem.ErrNoSpace, nospc},
	{filesystem.ErrReadOnly, rofs},
	{volume.ErrReadOnly, rofs},
	// TrueCrypt's hidden-volume protection: refuse, loudly, and keep
	// refusing (the filesystem stops writing after the first refusal).
	{volume.ErrProtected, perm},
	{volume.ErrOutOfRange, nospc},
	{iofs.ErrPermission, acces},
	{iofs.ErrInvalid, inval},
}

// Of returns n's number for err, and false when the table does not know
// err (the caller's choice then, normally EIO). err is first classified
// by package filesystem, so that an implementation's own errors (fat's,
// exfat's, ext4's, as package mount gets them) count as the sentinels
// they stand for.
func Of[E any](err error, n *Numbers[E]) (E, bool) {
	err = filesystem.Classify(err)
	for _, e := range table {
		if errors.Is(err, e.err) {
			return n.pick(e.kind), true
		}
	}
	var zero E
	return zero, false
}

func (n *Numbers[E]) pick(k kind) E {
	switch k {
	case noent:
		return n.NOENT
	case exist:
		return n.EXIST
	case notempty:
		return n.NOTEMPTY
	case isdir:
		return n.ISDIR
	case notdir:
		return n.NOTDIR
	case inval:
		return n.INVAL
	case nospc:
		return n.NOSPC
	case fbig:
		return n.FBIG
	case rofs:
		return n.ROFS
	case perm:
		return n.PERM
	}
	return n.ACCES
}
