package volume

// Credentials unlock a volume. The zero value of every field means "not
// given": no keyfiles, PIM 0 (the format's default), any keyslot.
type Credentials struct {
	// Password as bytes (UTF-8 as typed). TrueCrypt/VeraCrypt read at most
	// 64 bytes (128 for VeraCrypt ≥ 1.26 volumes), LUKS any length.
	Password []byte
	// Keyfiles are paths. For TrueCrypt/VeraCrypt they feed the keyfile
	// pool (a directory means every file in it); for LUKS the single keyfile
	// replaces the passphrase (cryptsetup's --key-file).
	Keyfiles []string
	// PIM is VeraCrypt's Personal Iterations Multiplier (0 = default).
	PIM int
	// KeyfileOffset and KeyfileSize select part of a LUKS key file
	// (cryptsetup's --keyfile-offset and --keyfile-size); 0 = whole file.
	KeyfileOffset int64
	KeyfileSize   int64
	// KeySlot restricts LUKS unlocking to one keyslot; nil tries them all.
	KeySlot *int
	// RecoveryPassword is a BitLocker 48-digit recovery password (one
	// given as Password is tried as one too, as cryptsetup does).
	RecoveryPassword []byte
	// StartupKey is the path of a BitLocker startup key (.BEK) file; a
	// .BEK file among Keyfiles is taken as one too (cryptsetup's
	// --key-file).
	StartupKey string
}

// Wipe zeroes the password and the recovery password in place.
func (c *Credentials) Wipe() {
	clear(c.Password)
	clear(c.RecoveryPassword)
}

// Options say how to look for and open a volume.
type Options struct {
	// Type forces a format: "" or "auto", "veracrypt", "truecrypt", "luks",
	// "luks1", "luks2", "bitlk", "fvault2".
	Type string
	// Hash and Encryption are hints that skip trying other PRFs and cipher
	// chains ("SHA-512", "AES-Twofish"...). Empty means try every one.
	Hash       string
	Encryption string
	// Hidden opens the hidden volume inside an outer TrueCrypt/VeraCrypt
	// volume and skips the outer header. Without it both are tried, and a
	// password that opens the hidden header opens the hidden volume, as in
	// VeraCrypt. System opens a system-encrypted disk or partition image.
	Hidden bool
	System bool
	// ReadOnly opens without write access.
	ReadOnly bool
	// Header is a detached LUKS header file.
	Header string
	// ProtectHidden, when set, are the hidden volume's credentials: the
	// outer volume is opened writable but any write that would land in the
	// hidden volume fails with ErrProtected.
	ProtectHidden *Credentials
	// Warn receives non-fatal warnings (backup header used, legacy format).
	Warn func(msg string)
	// Progress, if set, is told what a slow search tries as it starts it
	// (for TrueCrypt/VeraCrypt: "VeraCrypt SHA-512, normal header"; for
	// LUKS each keyslot with its KDF and cost).
	Progress func(trying string)
	// WrapDevice, when set, is put between the container (and a detached
	// header) and everything that reads or writes it: tests record there
	// the writes and flushes a command sends (internal/crashsim).
	WrapDevice func(Device) Device
}

func (o *Options) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}
