package filesystem

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cryptvol/cryptvol/exfat"
	"github.com/cryptvol/cryptvol/fat"
)

// ErrInvalidName means a name the filesystem cannot store (too long in
// its own unit, a forbidden character, a reserved name).
var ErrInvalidName = errors.New("invalid file name")

// ValidateName reports whether name, one path component, can be stored
// in a filesystem of type fstype (as Type and fsprobe name it), by that
// filesystem's own rule:
//
//   - vfat and exfat: at most 255 UTF-16 units, none of "*/:<>?\| nor a
//     control character, not ending in a space or a dot;
//   - ext2, ext3, ext4: at most 255 bytes, no "/" and no NUL;
//   - ntfs: at most 255 UTF-16 units of valid UTF-8 (what ntfs-3g
//     stores), no "/" and no NUL;
//
// and for all of them not empty, "." or "..". The error wraps
// ErrInvalidName. It is the one place these rules live for callers that
// check a whole command before writing anything.
func ValidateName(fstype, name string) error {
	var err error
	switch fstype {
	case "vfat":
		err = fat.ValidateName(name)
	case "exfat":
		err = exfat.ValidateName(name)
	case "ext2", "ext3", "ext4":
		err = validateExtName(name)
	case "ntfs":
		err = validateNTFSName(name)
	default:
		return fmt.Errorf("%w: no name rule for %s", ErrUnsupported, fstype)
	}
	if err != nil && !errors.Is(err, ErrInvalidName) {
		err = &classified{err: err, kind: ErrInvalidName}
	}
	return err
}

// nameLimit is the longest name of every filesystem here, in its unit.
const nameLimit = 255

func validateCommon(name string) error {
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	if i := strings.IndexAny(name, "/\x00"); i >= 0 {
		return fmt.Errorf("%w: %q contains %q", ErrInvalidName, name, name[i])
	}
	return nil
}

func validateExtName(name string) error {
	if err := validateCommon(name); err != nil {
		return err
	}
	if len(name) > nameLimit {
		return fmt.Errorf("%w: %q is %d bytes long, ext4 allows at most %d", ErrInvalidName, name, len(name), nameLimit)
	}
	return nil
}

func validateNTFSName(name string) error {
	if err := validateCommon(name); err != nil {
		return err
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: %q is not valid UTF-8 (NTFS stores UTF-16)", ErrInvalidName, name)
	}
	if n := len(utf16.Encode([]rune(name))); n > nameLimit {
		return fmt.Errorf("%w: %q is %d UTF-16 units long, NTFS allows at most %d", ErrInvalidName, name, n, nameLimit)
	}
	return nil
}
