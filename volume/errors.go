package volume

import (
	"errors"
	"fmt"

	"github.com/cryptvol/cryptvol/volume/internal/lock"
)

// Sentinel errors; drivers wrap them with detail and callers test them with
// errors.Is. The CLI maps them to its documented exit codes.
var (
	// ErrWrongPassword: no header decrypted with the credentials given (wrong
	// password, keyfile or PIM), or the file is not a volume of a known format.
	// TrueCrypt headers are indistinguishable from random data, so the two
	// cases cannot be told apart.
	ErrWrongPassword = errors.New("wrong password, keyfile or PIM, or not a recognised volume")
	// ErrDamaged: the header was recognised but is inconsistent.
	ErrDamaged = errors.New("damaged volume")
	// ErrUnsupported: a recognised volume using a feature this build lacks.
	ErrUnsupported = errors.New("unsupported volume")
	// ErrReadOnly: a write to a volume opened read-only.
	ErrReadOnly = errors.New("volume is read-only")
	// ErrProtected: a write refused because it would land in the hidden
	// volume that --protect-hidden protects.
	ErrProtected = errors.New("write refused: it would overwrite the protected hidden volume")
	// ErrReserved: a write refused because it would put data where the
	// format keeps its own metadata (BitLocker's metadata blocks, which
	// the volume shows as zeros).
	ErrReserved = errors.New("write refused: the range holds the volume format's own metadata")
	// ErrOutOfRange: an access beyond the end of the data area.
	ErrOutOfRange = errors.New("access beyond the end of the volume")
	// ErrTruncated: a container file shorter than its data area, opened
	// for writing (it wraps ErrDamaged).
	ErrTruncated = fmt.Errorf("%w: truncated container", ErrDamaged)
	// ErrExists: a create that would overwrite an existing file.
	ErrExists = errors.New("file exists")
	// ErrLocked: the container is locked by another process (or another
	// open in this one) in a mode that excludes the one asked for; the
	// error is a *LockedError naming the holder.
	ErrLocked = lock.ErrLocked
	// ErrHeaderChanged: the volume header changed on disk since it was
	// read, so another program (or machine) is writing the volume, which
	// no lock can see; the write was refused.
	ErrHeaderChanged = errors.New("the volume header changed on disk since it was opened: another program or machine is writing this volume, so nothing more is written")
	// ErrForeignBackup: a header backup that cannot be shown to belong to
	// the volume it would be restored to.
	ErrForeignBackup = errors.New("the header backup does not belong to this volume")
)

// ErrInvalidOption: an operation refused one of its options (a cipher,
// hash, size, PIM, keyslot number or KDF cost it cannot use) before
// touching anything. Errors that wrap it are *OptionError values, which
// carry the refusal's own message; the CLI maps them to its usage error.
var ErrInvalidOption = errors.New("invalid option")

// OptionError is a refused option. Its message is the refusal's own
// (ErrInvalidOption's text is not added), so marking an error as an
// option error changes no message; errors.Is reports ErrInvalidOption
// and whatever the refusal wraps.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Is reports ErrInvalidOption; what Err wraps is found through Unwrap.
func (e *OptionError) Is(target error) bool { return target == ErrInvalidOption }

// InvalidOption marks err as a refused option; nil stays nil.
func InvalidOption(err error) error {
	if err == nil {
		return nil
	}
	return &OptionError{Err: err}
}

// InvalidOptionf is InvalidOption(fmt.Errorf(format, args...)).
func InvalidOptionf(format string, args ...any) error {
	return &OptionError{Err: fmt.Errorf(format, args...)}
}
