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
//   - vfat, exfat and ntfs, the filesystems Windows reads: not one of the
//     device names Windows reserves (CON, PRN, AUX, NUL, COM0-9, LPT0-9,
//     in any case, with or without an extension: "aux.c" too), which
//     Windows cannot open, delete or rename;
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
	if err == nil && fstype != "ext2" && fstype != "ext3" && fstype != "ext4" {
		err = validateWindowsName(fstype, name)
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

// validateWindowsName refuses the device names of Windows. Windows takes
// the part before the first dot, without trailing spaces, as the device:
// "NUL.tar.gz" and "con .txt" are the device too.
func validateWindowsName(fstype, name string) error {
	base, _, _ := strings.Cut(name, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	reserved := false
	switch len(base) {
	case 3:
		reserved = base == "CON" || base == "PRN" || base == "AUX" || base == "NUL"
	default:
		// COM and LPT with one digit, also the superscripts ¹ ² ³.
		if rest, ok := strings.CutPrefix(base, "COM"); ok {
			reserved = isDeviceDigit(rest)
		} else if rest, ok := strings.CutPrefix(base, "LPT"); ok {
			reserved = isDeviceDigit(rest)
		}
	}
	if reserved {
		return fmt.Errorf("%w: %q is a device name on Windows (%s volumes are read there), which cannot open, rename or delete it", ErrInvalidName, name, fstype)
	}
	return nil
}

func isDeviceDigit(s string) bool {
	return len(s) == 1 && s[0] >= '0' && s[0] <= '9' || s == "¹" || s == "²" || s == "³"
}
