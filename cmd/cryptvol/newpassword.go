package main

import (
	"bytes"
	"errors"
	"strings"

	"github.com/spf13/pflag"
)

// newPassword reads the password for a new volume or header: from
// --password-file, -p, or a terminal prompt asked twice. Keyfile-only
// volumes may have an empty password.
func (cf *credFlags) newPassword(a *app, fs *pflag.FlagSet, what string, haveKeyfiles bool) ([]byte, error) {
	if cf.passwordFile != "" || fs.Changed("password") || cf.compat.keyFile != "" {
		pw, err := cf.readPassword(a, fs, cf.passwordFile, "password", "", haveKeyfiles)
		if err != nil {
			return nil, err
		}
		return pw, checkNewPassword(a, pw, haveKeyfiles, cf.newFormat(what))
	}
	if cf.nonInteractive || !stdinIsTerminal() {
		if haveKeyfiles {
			return nil, nil
		}
		if pw, ok, err := pipedPassword(a, cf); ok || err != nil {
			if err != nil {
				return nil, err
			}
			return pw, checkNewPassword(a, pw, haveKeyfiles, cf.newFormat(what))
		}
		return nil, usageError(errors.New("no password given for the new " + what + ": use --password-file FILE, -p PASSWORD, keyfiles, or run on a terminal"))
	}
	pw, err := promptPassword(a, "Enter password for the new "+what+": ")
	if err != nil {
		return nil, err
	}
	again, err := promptPassword(a, "Re-enter password: ")
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(pw, again) {
		return nil, usageError(errors.New("the passwords do not match"))
	}
	return pw, checkNewPassword(a, pw, haveKeyfiles, cf.newFormat(what))
}

// newFormat names whose advice the short-password warning quotes: the
// format being created (create sets cf.typ), VeraCrypt's for its volumes.
func (cf *credFlags) newFormat(what string) string {
	switch t := strings.ToLower(cf.typ); {
	case what == "archive":
		return "archive"
	case strings.HasPrefix(t, "luks"):
		return "LUKS"
	case t == "truecrypt":
		return "TrueCrypt"
	}
	return "VeraCrypt"
}

func checkNewPassword(a *app, pw []byte, haveKeyfiles bool, format string) error {
	if len(pw) == 0 && !haveKeyfiles {
		return usageError(errors.New("an empty password needs at least one keyfile"))
	}
	if len(pw) > 0 && len(pw) < 20 {
		switch format {
		case "VeraCrypt", "TrueCrypt":
			a.warnf("short passwords are easy to crack; VeraCrypt recommends 20 or more characters")
		default: // LUKS, archive: no VeraCrypt here
			a.warnf("short passwords are easy to crack: use 20 or more characters for %s", map[string]string{"LUKS": "a LUKS passphrase", "archive": "an archive password"}[format])
		}
	}
	return nil
}

// splitKeyfiles accepts VeraCrypt's --keyfiles spelling: a comma-separated
// list, where an empty string means none.
func splitKeyfiles(list []string) []string {
	var out []string
	for _, l := range list {
		for _, k := range strings.Split(l, ",") {
			if k = strings.TrimSpace(k); k != "" {
				out = append(out, k)
			}
		}
	}
	return out
}

// nonEmpty is list without its empty names: -k "" is VeraCrypt's "no
// keyfiles".
func nonEmpty(list []string) []string {
	var out []string
	for _, k := range list {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}
