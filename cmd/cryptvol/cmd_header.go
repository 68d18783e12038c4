package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

func init() {
	register(&command{
		name:    "header",
		summary: "back up or restore a volume's headers",
		usage: `Usage: cryptvol header backup VOLUME FILE [credentials] [--force]
       cryptvol header restore VOLUME FILE [credentials] [--force]

For LUKS volumes the header and keyslot area are copied byte for byte, as
cryptsetup's luksHeaderBackup/luksHeaderRestore do, and no password is
needed (the keyslots stay encrypted). restore refuses a backup whose UUID
is not the volume's, and a device with no LUKS header left to compare it
with, unless --force.

For VeraCrypt/TrueCrypt volumes, backup saves the header group (the normal
header and, as it is, the hidden-volume header area: 128 KiB, the layout of
VeraCrypt's own external backups) after checking that the credentials open
it. restore writes a backup over both header copies of the volume once it
is shown to belong there: the credentials open it, its data area fits the
container, and its key either decrypts the volume's data area to the
filesystem there or is the key of the volume's current header. A backup
that cannot be shown to belong (another volume's, or one of a volume
without a filesystem whose headers are all damaged) is refused with exit 5
unless --force.

backup --force replaces an existing FILE.

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
	force := fl.Bool("force", false, "backup: replace an existing FILE; restore: write a backup that cannot be shown to belong to the volume")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 3, 3); err != nil {
		return err
	}
	verb, path, file := fl.Arg(0), fl.Arg(1), fl.Arg(2)
	if verb != "backup" && verb != "restore" {
		return usageError(fmt.Errorf("unknown header action %q%s (want backup or restore)", verb, didYouMean(verb, subcommandsOf["header"])))
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
	if luks.Present(dev) || strings.HasPrefix(cf.typ, "luks") || (verb == "restore" && luks.IsHeaderFile(file)) {
		return luksHeader(a, dev, verb, path, file, *force)
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
		if err := writeAtomically(a, file, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
		fmt.Fprintf(a.stdout, "Header backup written to %s (%d bytes).\n", file, len(b))
		return nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	ro := tcrypt.RestoreOptions{Open: o, Recognise: holdsFilesystem, Force: *force}
	if err := tcrypt.HeaderRestore(ctx, dev, creds, b, ro); err != nil {
		return restoreError(err)
	}
	fmt.Fprintf(a.stdout, "Headers of %s restored from %s.\n", path, file)
	return nil
}

// holdsFilesystem is how restore proves a backup belongs: its key
// decrypts the data area to a filesystem.
func holdsFilesystem(data io.ReaderAt, size int64) bool {
	_, err := fsprobe.Probe(data)
	return err == nil
}

// restoreError gives a refused restore its exit code and the way round.
func restoreError(err error) error {
	if errors.Is(err, volume.ErrForeignBackup) {
		return withCode(exitDestroy, fmt.Errorf("%w (if you are sure it is this volume's, restore it with --force)", err))
	}
	return err
}

// luksHeader backs up or restores a LUKS header and keyslot area.
func luksHeader(a *app, dev *volume.FileDevice, verb, path, file string, force bool) error {
	if verb == "backup" {
		var n int64
		err := writeAtomically(a, file, func(w io.Writer) error {
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
	if err := luks.HeaderRestore(dev, f, st.Size(), luks.RestoreOptions{Force: force, Warn: func(m string) { a.warnf("%s", m) }}); err != nil {
		return restoreError(err)
	}
	fmt.Fprintf(a.stdout, "LUKS header of %s restored from %s.\n", path, file)
	return nil
}
