package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

func init() {
	register(&command{
		name:    "passwd",
		summary: "change a VeraCrypt/TrueCrypt volume's password, keyfiles, PIM or PRF",
		usage: `Usage: cryptvol passwd VOLUME [current credentials] [--new-password-file FILE]
                      [--new-keyfile FILE]... [--new-pim N] [--new-hash PRF] [--hidden]

Re-encrypts the volume header (the hidden volume's with --hidden) under new
credentials, each header copy with a fresh salt; the data is untouched. The
primary copy is written and synced before the backup copy, so an interrupted
change leaves a volume that opens with the old or the new password.
(LUKS volumes: use 'cryptvol keyslot change'.)

Example:
  cryptvol passwd secret.hc --password-file old.txt --new-password-file new.txt --new-pim 600
`,
		run: runPasswd,
	})
	register(&command{
		name:    "keyfile",
		summary: "generate a random keyfile",
		usage: `Usage: cryptvol keyfile FILE [--size N] [--force]

Writes N random bytes (default 64, as VeraCrypt) from the system's secure
generator to FILE, readable by its owner only.

Example:
  cryptvol keyfile ~/.keys/vol.key
`,
		run: runKeyfile,
	})
}

func runPasswd(ctx context.Context, a *app, args []string) error {
	c := commands["passwd"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	newPwFile := fl.String("new-password-file", "", "new password from the first line of `FILE`")
	var newKeyfiles []string
	fl.StringArrayVar(&newKeyfiles, "new-keyfile", nil, "new keyfile (repeatable)")
	newPIM := fl.Int("new-pim", -1, "new PIM (default: keep the current one)")
	newHash := fl.String("new-hash", "", "new PRF (default: keep the current one)")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	newKeyfiles = nonEmpty(newKeyfiles)
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	if d, err := volume.OpenDevice(fl.Arg(0), true); err == nil {
		err = refuseForeign("passwd", d)
		d.Close()
		if err != nil {
			return err
		}
	}
	old, o, err := cf.resolve(a, fl, false)
	if err != nil {
		return err
	}
	defer old.Wipe()
	var newPw []byte
	switch {
	case *newPwFile != "":
		newPw, err = readPasswordFile(a, *newPwFile)
	case len(newKeyfiles) > 0 && (cf.nonInteractive || !stdinIsTerminal()):
	case cf.nonInteractive || !stdinIsTerminal():
		err = usageError(errors.New("no new password given: use --new-password-file FILE (or new keyfiles)"))
	default:
		tmp := *cf
		tmp.passwordFile = ""
		newPw, err = tmp.newPassword(a, fl, "volume header", len(newKeyfiles) > 0)
	}
	if err != nil {
		return err
	}
	if len(newPw) == 0 && len(newKeyfiles) == 0 {
		return usageError(errors.New("an empty new password needs at least one new keyfile"))
	}
	if why := tcrypt.NotOpenableByVeraCrypt(*newHash); why != "" {
		a.warnf("%s (TrueCrypt-format volumes are not affected)", why)
	}
	pim := old.PIM
	if *newPIM >= 0 {
		pim = *newPIM
	}
	nc := volume.Credentials{Password: newPw, Keyfiles: newKeyfiles, PIM: pim}
	defer nc.Wipe()
	dev, err := volume.OpenDevice(fl.Arg(0), false)
	if err != nil {
		return err
	}
	defer dev.Close()
	if err := tcrypt.ChangeCredentials(ctx, dev, old, nc, tcrypt.ChangeOptions{Open: o, NewHash: *newHash}); err != nil {
		return createError(err)
	}
	fmt.Fprintln(a.stdout, "Header re-encrypted: the volume now opens with the new credentials.")
	return nil
}

func runKeyfile(ctx context.Context, a *app, args []string) error {
	c := commands["keyfile"]
	fl := newFlags(c, a)
	size := fl.Int("size", 64, "keyfile size in bytes (VeraCrypt reads at most 1 MiB)")
	force := fl.Bool("force", false, "replace an existing file")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	if *size < 1 || *size > 1<<20 {
		return usageError(fmt.Errorf("--size %d: want 1 to 1048576 bytes", *size))
	}
	path := fl.Arg(0)
	if _, err := os.Lstat(path); err == nil && !*force {
		return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to replace it)", path))
	}
	b := make([]byte, *size)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	defer clear(b)
	// Always 0600, also over an existing file: a keyfile is a secret.
	return atomicfile.Write(path, atomicfile.Options{Perm: 0o600, Leftover: a.leftover}, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
