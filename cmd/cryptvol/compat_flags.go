package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// The VeraCrypt text-mode and cryptsetup spellings every command that opens
// a volume accepts (README "Command-line conventions"), added to its flag
// set just before parsing, so no command has to list them and a command
// that has its own (create's --keyfiles) keeps it.

// credFlagsOf finds the credential flags of a flag set at parse time.
var credFlagsOf = map[*pflag.FlagSet]*credFlags{}

// compatFlags are the values of those spellings.
type compatFlags struct {
	keyfileList   []string // --keyfiles=a,b
	mountOptions  []string // -m/--mount-options ro,system,...
	keyFile       string   // cryptsetup --key-file: the whole file is the passphrase
	protectNoOpen bool     // --protect-hidden=yes where nothing can be protected
	readOnly      bool     // from -m ro: mount reads it
	text          bool     // --text: accepted, VeraCrypt's "no GUI"
	truecrypt     bool     // VeraCrypt's --truecrypt / -tc
}

func (cf *credFlags) addCompatFlags(fs *pflag.FlagSet) {
	add := func(name string, def func()) {
		if fs.Lookup(name) == nil {
			def()
		}
	}
	x := &cf.compat
	add("keyfiles", func() {
		fs.StringArrayVar(&x.keyfileList, "keyfiles", nil, "comma-separated keyfiles (VeraCrypt spelling of -k)")
	})
	if cf.creating {
		add = func(name string, def func()) {
			if name != "mount-options" && name != "protect-hidden" && fs.Lookup(name) == nil {
				def()
			}
		}
	}
	add("mount-options", func() {
		if fs.ShorthandLookup("m") == nil {
			fs.StringSliceVarP(&x.mountOptions, "mount-options", "m", nil, "VeraCrypt mount options: ro (readonly), system, timestamp, nokernelcrypto")
		} else {
			fs.StringSliceVar(&x.mountOptions, "mount-options", nil, "VeraCrypt mount options: ro (readonly), system, timestamp, nokernelcrypto")
		}
	})
	add("key-file", func() {
		fs.StringVar(&x.keyFile, "key-file", "", "cryptsetup's --key-file: the whole `FILE` (newline included; - = stdin) is the passphrase")
	})
	add("protect-hidden", func() {
		fs.Var(&yesNoFlag{&x.protectNoOpen}, "protect-hidden", "VeraCrypt's --protect-hidden=no (yes: only where the command writes)")
		fs.Lookup("protect-hidden").NoOptDefVal = "yes"
		fs.Lookup("protect-hidden").Hidden = true
	})
	add("text", func() {
		fs.BoolVar(&x.text, "text", false, "accepted for VeraCrypt compatibility; ignored")
		fs.Lookup("text").Hidden = true
	})
	add("truecrypt", func() {
		fs.BoolVar(&x.truecrypt, "truecrypt", false, "VeraCrypt's --truecrypt: same as --type truecrypt")
	})
}

// applyCompat turns the spellings into the credential flags.
func (cf *credFlags) applyCompat(a *app, fs *pflag.FlagSet) error {
	x := &cf.compat
	// VeraCrypt spells "no keyfiles" -k "" (and --keyfiles ""): an empty
	// name is never a keyfile (filepath.Abs would make it the current
	// directory, whose files would all become keyfiles).
	cf.keyfiles = append(nonEmpty(cf.keyfiles), splitKeyfiles(x.keyfileList)...)
	cf.hiddenKeyfiles = nonEmpty(cf.hiddenKeyfiles)
	x.keyfileList = nil
	if x.truecrypt {
		cf.typ = "truecrypt"
	}
	if x.protectNoOpen {
		return usageError(fmt.Errorf("--protect-hidden: %s only reads, there is nothing to protect (mount, put, rm, mv and mkdir take it)", fs.Name()))
	}
	for _, o := range x.mountOptions {
		switch strings.ToLower(strings.TrimSpace(o)) {
		case "ro", "readonly":
			x.readOnly = true
		case "system":
			cf.system = true
		case "timestamp", "nokernelcrypto", "":
			// Host file times are never changed, and no kernel crypto
			// is used: both are how cryptvol works anyway.
		case "headerbak":
			return usageError(errors.New("-m headerbak: cryptvol tries the backup header by itself when the primary one fails"))
		default:
			return usageError(fmt.Errorf("-m %s: unknown mount option (want ro, system, timestamp, nokernelcrypto)", o))
		}
	}
	return nil
}

// keyFilePassphrase reads cryptsetup's --key-file: every byte of the file
// (within --keyfile-offset and --keyfile-size) is the passphrase.
func (cf *credFlags) keyFilePassphrase(a *app) ([]byte, error) {
	var r io.Reader
	if cf.compat.keyFile == "-" {
		if a.stdinTaken {
			return nil, usageError(errors.New("standard input is already read for something else (a - argument): give --key-file a FILE"))
		}
		r = a.stdin
		a.stdinTaken = true
	} else {
		f, err := os.Open(cf.compat.keyFile)
		if err != nil {
			return nil, fmt.Errorf("key file: %w", err)
		}
		defer f.Close()
		r = f
	}
	if cf.keyfileOffset > 0 {
		if _, err := io.CopyN(io.Discard, r, cf.keyfileOffset); err != nil {
			return nil, fmt.Errorf("key file: skipping %d bytes: %w", cf.keyfileOffset, err)
		}
	}
	limit := int64(8 << 20) // cryptsetup's default --keyfile-size limit
	if cf.keyfileSize > 0 {
		limit = cf.keyfileSize
	}
	pw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	if int64(len(pw)) > limit {
		if cf.keyfileSize > 0 {
			return pw[:limit], nil
		}
		return nil, usageError(fmt.Errorf("key file %s is larger than 8 MiB", cf.compat.keyFile))
	}
	return pw, nil
}

// yesNoFlag is a boolean flag that also takes VeraCrypt's yes and no.
type yesNoFlag struct{ p *bool }

func (v *yesNoFlag) String() string {
	if v.p != nil && *v.p {
		return "yes"
	}
	return "no"
}

func (v *yesNoFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "yes", "y":
		*v.p = true
		return nil
	case "no", "n":
		*v.p = false
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want yes or no")
	}
	*v.p = b
	return nil
}

func (v *yesNoFlag) Type() string { return "yes|no" }
