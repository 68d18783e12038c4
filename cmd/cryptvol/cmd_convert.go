package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

func init() {
	register(&command{
		name:    "convert",
		summary: "convert a TrueCrypt volume to VeraCrypt, or LUKS1 to LUKS2 and back",
		usage: `Usage: cryptvol convert VOLUME --to veracrypt [TrueCrypt credentials] [--hash PRF] [--pim N] [--hidden]
       cryptvol convert VOLUME --to luks2|luks1 [--header FILE]

Rewrites the volume header in another format; the data is not touched.

--to veracrypt re-encrypts a TrueCrypt volume's header (both its copies)
as a VeraCrypt header, which VeraCrypt 1.26 and later open (they dropped
TrueCrypt volumes) and TrueCrypt no longer does. The password and keyfiles
stay; --hash chooses the new PRF (default SHA-512; RIPEMD-160 is refused,
VeraCrypt 1.26 cannot open it) and --pim the new PIM (default 0: 500,000
iterations). A hidden volume's header opens only with its own password, so
each is converted on its own: the outer volume's with its password, the
hidden volume's with --hidden and the hidden password.

--to luks2 and --to luks1 convert a LUKS header as cryptsetup convert does,
refusing what the target cannot hold (LUKS1 has no Argon2, at most 8
keyslots, no tokens, only 512-byte sectors and one hash for everything).
No passphrase is needed: every keyslot carries over. The keyslots move to
where cryptsetup's conversion puts them (28 KiB on for LUKS2, back for
LUKS1), so either tool converts the other's result.

Either way the header is rewritten so that a crash at any moment leaves a
volume that opens, in the old format or the new one. The one exception is
a LUKS header whose keyslots area has no free place as big as a keyslot
(eight 512-bit keyslots in 2 MiB): there each keyslot is copied over
itself, as cryptsetup copies them all, and a crash in that copy loses it.

Examples:
  cryptvol convert old.tc --to veracrypt --password-file pw.txt
  cryptvol convert old.tc --to veracrypt --hidden --password-file hidden-pw.txt --pim 600
  cryptvol convert disk.img --to luks2
`,
		run: runConvert,
	})
}

func runConvert(ctx context.Context, a *app, args []string) error {
	c := commands["convert"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	to := fl.String("to", "", "target format: veracrypt, luks2 or luks1")
	fl.Lookup("hash").Usage = "--to veracrypt: PRF of the new header (default SHA-512)"
	fl.Lookup("pim").Usage = "--to veracrypt: PIM of the new header (default 0)"
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	path := fl.Arg(0)
	switch target := strings.ToLower(*to); target {
	case "veracrypt":
		return convertToVeraCrypt(ctx, a, fl, cf, path)
	case "luks2", "luks1":
		return convertLUKS(ctx, a, cf, path, target)
	case "":
		return usageError(errors.New("--to is required: veracrypt, luks2 or luks1"))
	default:
		return usageError(fmt.Errorf("--to %q: want veracrypt, luks2 or luks1", *to))
	}
}

func convertToVeraCrypt(ctx context.Context, a *app, fl *pflag.FlagSet, cf *credFlags, path string) error {
	if cf.header != "" {
		return usageError(errors.New("--header is for LUKS volumes"))
	}
	newHash, newPIM := cf.hash, cf.pim
	if newPIM < 0 {
		return usageError(errors.New("--pim must not be negative"))
	}
	if why := tcrypt.NotOpenableByVeraCrypt(newHash); why != "" {
		return usageError(fmt.Errorf("--hash %s: %s", newHash, why))
	}
	// --hash and --pim describe the new header; TrueCrypt has no PIM and
	// its few PRFs are cheap to try.
	cf.hash, cf.pim = "", 0
	creds, o, err := cf.resolve(a, fl, false)
	if err != nil {
		return err
	}
	defer creds.Wipe()
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	if luks.Present(dev) {
		return usageError(fmt.Errorf("%s is a LUKS volume: use --to luks2 or --to luks1", path))
	}
	got, err := tcrypt.ConvertToVeraCrypt(ctx, dev, creds, tcrypt.ConvertOptions{Open: o, Hash: newHash, PIM: newPIM})
	if err != nil {
		return createError(err)
	}
	which, other := "TrueCrypt volume header", "A hidden volume inside it, if there is one, is still a TrueCrypt volume: convert it with --hidden and its own password."
	if got.Hidden {
		which, other = "hidden volume's TrueCrypt header", "The outer volume's header was not converted: it needs its own password (run convert again without --hidden)."
	}
	pim := ""
	if newPIM != 0 {
		pim = fmt.Sprintf(", PIM %d", newPIM)
	}
	fmt.Fprintf(a.stdout, "Converted the %s to VeraCrypt (%s, %s, %d iterations%s; both copies); the data is unchanged.\n", which, got.Encryption, got.Hash, got.Iterations, pim)
	fmt.Fprintln(a.stdout, "VeraCrypt opens it now (without --truecrypt); TrueCrypt no longer does.")
	if got.RepairedPrimary {
		fmt.Fprintln(a.stdout, "The primary header copy was damaged; it was rewritten from the backup copy.")
	}
	fmt.Fprintln(a.stdout, other)
	return nil
}

func convertLUKS(ctx context.Context, a *app, cf *credFlags, path, target string) error {
	hdrPath := path
	if cf.header != "" {
		hdrPath = cf.header
	}
	dev, err := volume.OpenDevice(hdrPath, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	if !luks.Present(dev) {
		return fmt.Errorf("%w: %s has no LUKS header (TrueCrypt volumes convert with --to veracrypt)", volume.ErrWrongPassword, hdrPath)
	}
	err = luks.Convert(ctx, dev, target, luks.ConvertOptions{Warn: func(m string) { a.warnf("%s", m) }})
	switch {
	case errors.Is(err, luks.ErrAlreadyType):
		fmt.Fprintf(a.stdout, "%s is already %s: nothing changed.\n", hdrPath, strings.ToUpper(target))
		return nil
	case errors.Is(err, luks.ErrCannotConvert):
		return withCode(exitDamaged, err)
	case err != nil:
		return err
	}
	fmt.Fprintf(a.stdout, "Converted the LUKS header of %s to %s; every keyslot carries over and the data is unchanged.\n", hdrPath, strings.ToUpper(target))
	return nil
}
