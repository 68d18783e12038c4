package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

func init() {
	register(&command{
		name:    "header",
		summary: "back up or restore a volume's headers",
		usage: `Usage: cryptvol header backup VOLUME FILE [credentials]
       cryptvol header restore VOLUME FILE [credentials]

For LUKS volumes the header and keyslot area are copied byte for byte, as
cryptsetup's luksHeaderBackup/luksHeaderRestore do, and no password is
needed (the keyslots stay encrypted).

For VeraCrypt/TrueCrypt volumes, backup saves the header group of a VeraCrypt/TrueCrypt volume (its normal
header and, as it is, the hidden-volume header area: 128 KiB, the layout of
VeraCrypt's own external backups) after checking that the credentials open
it. restore writes a backup over both header copies of the volume; it
refuses a backup that the credentials do not open, that does not fit the
container, or whose master key differs from the volume's current one.

Example:
  cryptvol header backup secret.hc secret.hdr --password-file pw.txt
  cryptvol header restore secret.hc secret.hdr --password-file pw.txt
`,
		run: runHeader,
	})
}

func runHeader(ctx context.Context, a *app, args []string) error {
	c := commands["header"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	force := fl.Bool("force", false, "backup: replace an existing FILE")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 3, 3); err != nil {
		return err
	}
	verb, path, file := fl.Arg(0), fl.Arg(1), fl.Arg(2)
	if verb != "backup" && verb != "restore" {
		return usageError(fmt.Errorf("unknown header action %q (want backup or restore)", verb))
	}
	dev, err := volume.OpenDevice(path, verb == "backup")
	if err != nil {
		return err
	}
	defer dev.Close()
	if verb == "backup" {
		if _, err := os.Lstat(file); err == nil && !*force {
			return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to replace it)", file))
		}
	}
	if err := refuseForeign("header "+verb, dev); err != nil {
		return err
	}
	head := make([]byte, 4096)
	n, _ := dev.ReadAt(head, 0)
	if luks.IsLUKS(head[:n]) || strings.HasPrefix(cf.typ, "luks") {
		return luksHeader(a, dev, verb, path, file)
	}
	creds, o, err := cf.resolve(a, fl, verb == "backup")
	if err != nil {
		return err
	}
	defer creds.Wipe()
	if verb == "backup" {
		b, err := tcrypt.HeaderBackup(ctx, dev, creds, o)
		if err != nil {
			return err
		}
		if err := writeAtomically(file, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "Header backup written to %s (%d bytes).\n", file, len(b))
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := tcrypt.HeaderRestore(ctx, dev, creds, o, b); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Headers of %s restored from %s.\n", path, file)
	return nil
}

// luksHeader backs up or restores a LUKS header and keyslot area.
func luksHeader(a *app, dev *volume.FileDevice, verb, path, file string) error {
	if verb == "backup" {
		var n int64
		err := writeAtomically(file, func(w io.Writer) error {
			var err error
			n, err = luks.HeaderBackup(dev, w)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "LUKS header backup written to %s (%d bytes).\n", file, n)
		return nil
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := luks.HeaderRestore(dev, f, st.Size()); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "LUKS header of %s restored from %s.\n", path, file)
	return nil
}
