package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/cryptvol/cryptvol/volume"
)

// credFlags are the options every command that opens a volume takes
// (docs/ARCHITECTURE.md, "Opening any volume"); create takes the subset
// that applies to a new volume (addCreateCredFlags).
type credFlags struct {
	passwordFile   string
	password       string
	pim            int
	keyfiles       []string
	hidden         bool
	system         bool
	typ            string
	hash           string
	encryption     string
	header         string
	keySlot        int
	keyfileOffset  int64
	keyfileSize    int64
	nonInteractive bool
	// BitLocker: a recovery password (the flag without a value asks
	// for it) and a startup key file.
	recoveryPassword string
	startupKey       string

	protectHidden      bool
	hiddenPasswordFile string
	hiddenKeyfiles     []string
	hiddenPIM          int

	// compat holds the VeraCrypt and cryptsetup spellings (compat_flags.go).
	compat compatFlags

	// creating is set for create's flags: the compatibility spellings
	// that only make sense when opening (-m, --protect-hidden) are not
	// added.
	creating bool

	// prompted is set when resolve asked for the password on the
	// terminal (withTries asks again when it was wrong).
	prompted bool
}

func addCredFlags(fs *pflag.FlagSet) *credFlags {
	cf := &credFlags{}
	fs.StringVar(&cf.passwordFile, "password-file", "", "read the password from the first line of `FILE` (- = stdin)")
	fs.StringVarP(&cf.password, "password", "p", "", "password on the command line (visible to other users: prefer --password-file)")
	fs.IntVar(&cf.pim, "pim", 0, "VeraCrypt PIM (0 = default)")
	fs.StringArrayVarP(&cf.keyfiles, "keyfile", "k", nil, "keyfile (repeatable); for LUKS the key file replaces the passphrase")
	fs.BoolVar(&cf.hidden, "hidden", false, "open the hidden volume inside the outer one")
	fs.BoolVar(&cf.system, "system", false, "open a system-encrypted disk or partition image")
	fs.StringVar(&cf.typ, "type", "auto", "volume type: auto, veracrypt, truecrypt, luks, luks1, luks2, bitlk, fvault2")
	fs.StringVar(&cf.hash, "hash", "", "only try this PRF (SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160, SHA-1, argon2id)")
	fs.StringVar(&cf.encryption, "encryption", "", "only try this cipher or cascade (AES, Serpent, AES-Twofish, ...)")
	fs.StringVar(&cf.header, "header", "", "detached LUKS header `FILE`")
	fs.IntVar(&cf.keySlot, "key-slot", -1, "LUKS: only try keyslot `N`")
	fs.Int64Var(&cf.keyfileOffset, "keyfile-offset", 0, "LUKS: skip `N` bytes of the key file")
	fs.Int64Var(&cf.keyfileSize, "keyfile-size", 0, "LUKS: read at most `N` bytes of the key file")
	fs.BoolVar(&cf.nonInteractive, "non-interactive", false, "never prompt; fail if something is missing")
	fs.StringVar(&cf.recoveryPassword, "recovery-password", "", "BitLocker: the 48-digit recovery `KEY` (without a value: ask for it); one given as the password works too")
	fs.StringVar(&cf.startupKey, "startup-key", "", "BitLocker: the startup key `FILE` (.BEK); -k FILE.BEK works too")
	fs.StringVar(&cf.startupKey, "bekfile", "", "BitLocker: dislocker's name for --startup-key")
	fs.MarkHidden("bekfile")
	fs.Lookup("password").NoOptDefVal = ""
	fs.Lookup("recovery-password").NoOptDefVal = ""
	credFlagsOf[fs] = cf
	return cf
}

// addCreateCredFlags adds the credential options of a new volume: those
// of addCredFlags that apply when creating, worded for creating. BitLocker
// and FileVault 2 keys, --system and -m are not among them (cryptvol does
// not create those volumes).
func addCreateCredFlags(fs *pflag.FlagSet) *credFlags {
	cf := &credFlags{creating: true, keySlot: -1}
	fs.StringVar(&cf.passwordFile, "password-file", "", "read the new volume's password from the first line of `FILE` (- = stdin)")
	fs.StringVarP(&cf.password, "password", "p", "", "the new password on the command line (visible to other users: prefer --password-file)")
	fs.IntVar(&cf.pim, "pim", 0, "VeraCrypt PIM of the new volume (0 = default; a larger one is slower to open and to crack)")
	fs.StringArrayVarP(&cf.keyfiles, "keyfile", "k", nil, "keyfile (repeatable) the new volume needs with its password; for LUKS the key file replaces the passphrase")
	fs.BoolVar(&cf.hidden, "hidden", false, "create a hidden volume inside the existing VeraCrypt/TrueCrypt VOLUME")
	fs.StringVar(&cf.typ, "type", "veracrypt", "format of the new volume: veracrypt, truecrypt, luks2 (or luks) or luks1")
	fs.StringVar(&cf.hash, "hash", "", "PRF that derives the new volume's header key: SHA-512 (default), Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160 (TrueCrypt), SHA-1; LUKS: the PBKDF2 hash")
	fs.StringVar(&cf.encryption, "encryption", "", "cipher or cascade that encrypts the new volume: AES (default), Serpent, Twofish, AES-Twofish, ...; LUKS: one cipher (or --cipher)")
	fs.StringVar(&cf.header, "header", "", "LUKS: write the header to the detached `FILE`, not into VOLUME")
	fs.IntVar(&cf.keySlot, "key-slot", -1, "LUKS: put the passphrase in keyslot `N` (-1: slot 0)")
	fs.Int64Var(&cf.keyfileOffset, "keyfile-offset", 0, "LUKS: skip `N` bytes of the key file")
	fs.Int64Var(&cf.keyfileSize, "keyfile-size", 0, "LUKS: read at most `N` bytes of the key file")
	fs.BoolVar(&cf.nonInteractive, "non-interactive", false, "never prompt; fail if something is missing")
	fs.Lookup("password").NoOptDefVal = ""
	credFlagsOf[fs] = cf
	return cf
}

// addProtectFlags adds TrueCrypt's hidden-volume protection options.
func (cf *credFlags) addProtectFlags(fs *pflag.FlagSet) {
	fs.Var(&yesNoFlag{&cf.protectHidden}, "protect-hidden", "refuse writes that would land in the hidden volume (asks for its password); =yes|no as VeraCrypt")
	fs.Lookup("protect-hidden").NoOptDefVal = "yes"
	fs.StringVar(&cf.hiddenPasswordFile, "hidden-password-file", "", "password of the hidden volume to protect, from `FILE`")
	fs.StringArrayVar(&cf.hiddenKeyfiles, "hidden-keyfile", nil, "keyfile of the hidden volume to protect (repeatable)")
	fs.IntVar(&cf.hiddenPIM, "hidden-pim", 0, "PIM of the hidden volume to protect")
}

// resolve resolves the credentials (prompting on a terminal when needed) and
// opens the volume.
func (cf *credFlags) resolve(a *app, fs *pflag.FlagSet, readOnly bool) (volume.Credentials, volume.Options, error) {
	var c volume.Credentials
	if cf.compat.readOnly && !readOnly {
		return c, volume.Options{}, usageError(fmt.Errorf("-m ro (read-only): %s writes to the volume", fs.Name()))
	}
	rp, err := cf.readRecoveryPassword(a, fs)
	if err != nil {
		return c, volume.Options{}, err
	}
	c.RecoveryPassword = rp
	c.StartupKey = cf.startupKey
	// Other secrets stand in for the password; a BitLocker volume with a
	// clear key needs none at all (VOLUME is every command's first
	// argument).
	other := len(cf.keyfiles) > 0 || rp != nil || cf.startupKey != ""
	if !other && cf.passwordFile == "" && !fs.Changed("password") && fs.NArg() > 0 &&
		volume.OpensWithoutCredentials(fs.Arg(0), volume.Options{Type: cf.typ}) {
		other = true
		cf.nonInteractive = true // nothing to ask for
	}
	pw, err := cf.readPassword(a, fs, cf.passwordFile, "password", "Enter password: ", other)
	if err != nil {
		return c, volume.Options{}, err
	}
	c.Password = pw
	c.Keyfiles = cf.keyfiles
	c.PIM = cf.pim
	if cf.pim < 0 {
		return c, volume.Options{}, usageError(errors.New("--pim must not be negative"))
	}
	c.KeyfileOffset = cf.keyfileOffset
	c.KeyfileSize = cf.keyfileSize
	if cf.keySlot >= 0 {
		s := cf.keySlot
		c.KeySlot = &s
	}
	o := volume.Options{
		Type:       cf.typ,
		Hash:       cf.hash,
		Encryption: cf.encryption,
		Hidden:     cf.hidden,
		System:     cf.system,
		ReadOnly:   readOnly,
		Header:     cf.header,
		Warn:       func(msg string) { a.warnf("%s", msg) },
	}
	if cf.protectHidden {
		if cf.hidden {
			return c, o, usageError(errors.New("--protect-hidden protects the hidden volume while the outer one is open; do not combine it with --hidden"))
		}
		hpw, err := cf.readPassword(a, fs, cf.hiddenPasswordFile, "", "Enter password of the hidden volume to protect: ", len(cf.hiddenKeyfiles) > 0)
		if err != nil {
			return c, o, err
		}
		o.ProtectHidden = &volume.Credentials{Password: hpw, Keyfiles: cf.hiddenKeyfiles, PIM: cf.hiddenPIM}
	}
	return c, o, nil
}

// readPassword takes a password from a file, the -p flag (when flagName is
// set and given), or a terminal prompt. With keyfiles and no password
// source, the password is empty (keyfile-only volumes).
func (cf *credFlags) readPassword(a *app, fs *pflag.FlagSet, file, flagName, prompt string, haveKeyfiles bool) ([]byte, error) {
	if file != "" {
		return readPasswordFile(a, file)
	}
	if flagName != "" && cf.compat.keyFile != "" {
		return cf.keyFilePassphrase(a)
	}
	if flagName != "" && fs.Changed(flagName) {
		a.warnf("a password given with -p/--password is visible to other users of this machine; prefer --password-file")
		return []byte(cf.password), nil
	}
	if haveKeyfiles && (cf.nonInteractive || !stdinIsTerminal()) {
		return nil, nil
	}
	if pw, ok, err := pipedPassword(a, cf); ok || err != nil {
		return pw, err
	}
	if cf.nonInteractive || !stdinIsTerminal() {
		return nil, usageError(errors.New("no password given: use --password-file FILE (- for stdin), -p PASSWORD, pipe it in, or run on a terminal to be asked (BitLocker: also --recovery-password=KEY or --startup-key FILE.BEK)"))
	}
	cf.prompted = true
	return promptPassword(a, prompt)
}

// readRecoveryPassword takes --recovery-password's value, or asks for it
// on a terminal when the flag has none. nil means the flag was not given.
func (cf *credFlags) readRecoveryPassword(a *app, fs *pflag.FlagSet) ([]byte, error) {
	if !fs.Changed("recovery-password") {
		return nil, nil
	}
	if cf.recoveryPassword != "" {
		return []byte(cf.recoveryPassword), nil
	}
	if cf.nonInteractive || !stdinIsTerminal() {
		return nil, usageError(errors.New("--recovery-password without a value asks for it on a terminal: give it as --recovery-password=KEY or in --password-file"))
	}
	return promptPassword(a, "Enter BitLocker recovery password: ")
}

func stdinIsTerminal() bool { return term.IsTerminal(int(os.Stdin.Fd())) }

// readPasswordFile returns the first line of the file (without its line
// ending); "-" reads standard input.
func readPasswordFile(a *app, name string) ([]byte, error) {
	var r io.Reader
	if name == "-" {
		if a.stdinTaken {
			return nil, usageError(errors.New("standard input is already read for something else (a - argument or another password): give this password with --password-file FILE"))
		}
		a.stdinTaken = true
		r = a.stdin
	} else {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("password file: %w", err)
		}
		defer f.Close()
		r = f
	}
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("password file: %w", err)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}

// pipedPassword reads the password from standard input when it is not a
// terminal (`echo pw | cryptvol ls vol`, as cryptsetup does), unless
// stdin is the command's data or --non-interactive. ok is false when
// nothing was piped in, so the caller says how to give one.
func pipedPassword(a *app, cf *credFlags) (pw []byte, ok bool, err error) {
	if cf.nonInteractive || a.stdinTaken || stdinIsTerminal() || a.stdin == nil {
		return nil, false, nil
	}
	pw, err = readPasswordFile(a, "-")
	if err != nil {
		return nil, false, err
	}
	return pw, len(pw) > 0, nil
}
