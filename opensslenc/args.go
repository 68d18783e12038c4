package opensslenc

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Args are the options of an `openssl enc` command line, as written: no
// file is opened and no password read while parsing.
type Args struct {
	Decrypt bool
	// Cipher is the -CIPHER or -cipher NAME given last ("" if none);
	// None is -none (no encryption, e.g. base64 only).
	Cipher string
	None   bool
	// In and Out are the -in and -out files; "" and "-" mean standard
	// input and output.
	In, Out string
	// PassKind is "k" (Password holds the -k text) or "kfile" (Password
	// holds the file name), whichever came last; "" if neither. -pass is
	// only consulted without them, as in OpenSSL.
	PassKind, Password string
	Pass               string // -pass pass:X | env:VAR | file:PATH | fd:N | stdin
	SaltHex            string // -S
	NoSalt             bool
	Digest             string // -md
	PBKDF2             bool
	Iterations         int // OpenSSL's resolved count: 10000 for -pbkdf2, 1 when unused
	KeyHex, IVHex      string
	HaveKey, HaveIV    bool
	HaveSalt           bool
	NoPad              bool
	Base64, SingleLine bool
	// Print is 1 for -p (print salt, key and IV, then run) and 2 for -P
	// (print them and stop).
	Print   int
	Verbose bool
	List    bool
	Help    bool
	// Ignored lists options accepted so that OpenSSL command lines run
	// unchanged but that mean nothing here (-provider legacy, -bufsize N,
	// -debug, ...), for a note to the user.
	Ignored []string
}

// ErrUsage marks a command line ParseArgs cannot accept.
var ErrUsage = errors.New("usage")

// valueOptions take an argument; flagOptions do not.
var valueOptions = map[string]bool{
	"in": true, "out": true, "pass": true, "k": true, "kfile": true, "K": true, "S": true, "iv": true,
	"md": true, "iter": true, "cipher": true, "bufsize": true, "provider": true, "provider-path": true,
	"propquery": true, "rand": true, "writerand": true, "engine": true,
}

var flagOptions = map[string]bool{
	"e": true, "d": true, "p": true, "P": true, "a": true, "base64": true, "A": true, "nopad": true,
	"salt": true, "nosalt": true, "pbkdf2": true, "v": true, "debug": true, "none": true,
	"list": true, "ciphers": true, "help": true, "h": true, "z": true,
}

// ParseArgs reads `openssl enc` options: single-dash long options (-in
// FILE, -aes-256-cbc, -pass pass:x), also written with two dashes
// (--in FILE) or with =VALUE (-iter=1000); any other option names a
// cipher. Errors wrap ErrUsage.
func ParseArgs(args []string) (*Args, error) {
	a := &Args{}
	iter := 0
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if len(arg) < 2 || arg[0] != '-' {
			return nil, fmt.Errorf("%w: unexpected argument %q (enc takes only options; the input is -in FILE)", ErrUsage, arg)
		}
		name := strings.TrimPrefix(arg[1:], "-")
		value, hasValue := "", false
		if eq := strings.IndexByte(name, '='); eq > 0 {
			name, value, hasValue = name[:eq], name[eq+1:], true
		}
		if valueOptions[name] {
			if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("%w: option -%s needs a value", ErrUsage, name)
				}
				i++
				value = args[i]
			}
		} else if hasValue && flagOptions[name] {
			return nil, fmt.Errorf("%w: option -%s takes no value", ErrUsage, name)
		}
		switch name {
		case "e":
			a.Decrypt = false
		case "d":
			a.Decrypt = true
		case "in":
			a.In = value
		case "out":
			a.Out = value
		case "k":
			a.PassKind, a.Password = "k", value
		case "kfile":
			a.PassKind, a.Password = "kfile", value
		case "pass":
			a.Pass = value
		case "K":
			a.KeyHex, a.HaveKey = value, true
		case "iv":
			a.IVHex, a.HaveIV = value, true
		case "S":
			a.SaltHex, a.HaveSalt = value, true
		case "salt":
			a.NoSalt = false
		case "nosalt":
			a.NoSalt = true
		case "md":
			a.Digest = value
		case "iter":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%w: -iter %q: want a count of 1 or more", ErrUsage, value)
			}
			iter, a.PBKDF2 = n, true
		case "pbkdf2":
			a.PBKDF2 = true
			if iter == 0 { // OpenSSL keeps an -iter given before
				iter = DefaultIterations
			}
		case "nopad":
			a.NoPad = true
		case "a", "base64":
			a.Base64 = true
		case "A":
			a.SingleLine = true
		case "p":
			a.Print = 1
		case "P":
			a.Print = 2
		case "v":
			a.Verbose = true
		case "none":
			a.None, a.Cipher = true, ""
		case "list", "ciphers":
			a.List = true
		case "help", "h":
			a.Help = true
		case "cipher":
			a.Cipher, a.None = value, false
		case "bufsize", "provider", "provider-path", "propquery", "rand", "writerand":
			a.Ignored = append(a.Ignored, "-"+name+" "+value)
		case "debug":
			a.Ignored = append(a.Ignored, "-"+name)
		case "engine":
			return nil, fmt.Errorf("%w: -engine is not supported", ErrUsage)
		case "z":
			return nil, fmt.Errorf("%w: -z (zlib compression) is not supported", ErrUsage)
		default:
			if hasValue {
				return nil, fmt.Errorf("%w: unknown option %q", ErrUsage, arg)
			}
			if _, err := LookupCipher(name); err != nil {
				return nil, fmt.Errorf("%w: unknown option or cipher %q (see -list)", ErrUsage, arg)
			}
			a.Cipher, a.None = name, false
		}
	}
	if iter == 0 {
		iter = 1
	}
	a.Iterations = iter
	return a, nil
}

// Params turns the command line into Params, reading the password from
// -k, -kfile or -pass (through src). Params.Password stays nil when none
// of them is given: the caller then prompts, unless a -K key makes a
// password unnecessary. warnings are OpenSSL's notes about short or long
// hex values. Errors about the values themselves wrap ErrUsage.
func (a *Args) Params(src PasswordSource) (p Params, warnings []string, err error) {
	if a.None || a.Cipher == "" {
		return p, nil, fmt.Errorf("%w: no cipher given (for example -aes-256-cbc; see -list)", ErrUsage)
	}
	c, err := LookupCipher(a.Cipher)
	if err != nil {
		return p, nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if _, err := LookupDigest(a.Digest); err != nil {
		return p, nil, fmt.Errorf("%w: -md: %v (want one of %s)", ErrUsage, err, strings.Join(DigestNames(), ", "))
	}
	p = Params{
		Cipher:     c,
		NoSalt:     a.NoSalt,
		Digest:     a.Digest,
		PBKDF2:     a.PBKDF2,
		Iterations: a.Iterations,
		NoPad:      a.NoPad,
		Base64:     a.Base64,
		SingleLine: a.SingleLine,
	}
	hex := func(flag, s string, size int) ([]byte, error) {
		b, warn, err := ParseHex(s, size)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrUsage, flag, err)
		}
		if warn != "" {
			warnings = append(warnings, flag+": "+warn)
		}
		return b, nil
	}
	if a.HaveKey {
		if p.Key, err = hex("-K", a.KeyHex, c.KeySize); err != nil {
			return p, nil, err
		}
	}
	if a.HaveIV {
		if c.IVSize == 0 {
			warnings = append(warnings, "-iv: iv not used by this cipher")
		} else if p.IV, err = hex("-iv", a.IVHex, c.IVSize); err != nil {
			return p, nil, err
		}
	}
	if a.HaveSalt && !a.NoSalt {
		if p.Salt, err = hex("-S", a.SaltHex, SaltSize); err != nil {
			return p, nil, err
		}
	}
	switch {
	case a.PassKind == "k":
		p.Password = append([]byte{}, a.Password...)
	case a.PassKind == "kfile":
		if p.Password, err = ReadKeyFile(a.Password); err != nil {
			return p, nil, err
		}
	case a.Pass != "":
		if p.Password, err = src.ReadPassword(a.Pass); err != nil {
			return p, nil, err
		}
	}
	return p, warnings, nil
}
