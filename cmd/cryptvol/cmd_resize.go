package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/resize"
	"github.com/cryptvol/cryptvol/volume"
)

func init() {
	register(&command{
		name:    "resize",
		summary: "grow or shrink a VeraCrypt, TrueCrypt or LUKS file container and its filesystem",
		usage: `Usage: cryptvol resize VOLUME --size [+|-]N [password options]
                      [--no-hidden | --protect-hidden --hidden-password-file FILE]

Makes the container N bytes (K, M, G, T suffixes as create's --size), or
N more (+) or less (-) than it is. The data keys stay; both header copies
are rewritten with the new size, each with a fresh salt, the backup header
group moved to the new end.

Grow: the file is extended, the new backup header group written and synced,
then the primary header; then the filesystem is grown: FAT and exFAT built in,
as far as the room in their FAT (and exFAT's allocation bitmap) allows
without moving data (the rest of the space stays unused, and the volume
opens in VeraCrypt with its new size); ext2/3/4 and NTFS by resize2fs and
ntfsresize, run on a decrypted copy as fsck runs e2fsck.
Shrink: the filesystem is shrunk first (FAT and exFAT: only free clusters at
their end are given up; ext2/3/4 and NTFS: resize2fs and ntfsresize, which
move data), then the headers are rewritten, then the file is truncated. A shrink that the filesystem cannot follow changes nothing and
exits 5.

A kill at any point leaves a volume that opens at its old or its new size;
run the same command again to finish (VOLUME.cryptvol-resize, beside the
container, records the resize until it is done, so a relative --size
counts from the size the interrupted run started from). What resize2fs and
ntfsresize change is journalled first (VOLUME.cryptvol-resize-journal,
the encrypted bytes as they will land) and copied in after; a kill while
it is copied in is finished by the next command that opens the volume
(export, mount, ls..., with a warning), and the next resize finishes the
rest.

A hidden volume cannot be seen without its password. A grow keeps its header
copies; a shrink would cut it off. So a shrink of a VeraCrypt or TrueCrypt
volume needs --no-hidden (you know it holds no hidden volume) and is refused
(exit 5, nothing changed) without it; with the hidden credentials given by
--protect-hidden a shrink is refused, a grow checks them first.
LUKS1 and LUKS2 file containers: the filesystem as above; a LUKS2 data
segment of fixed size gets the new size (both header copies), one that is
"dynamic" (runs to the end, as LUKS1's) stays so. Detached headers: no.
System encryption and hidden volumes themselves: no.

Example:
  cryptvol resize secret.hc --size +64M --password-file pw.txt
  cryptvol resize secret.hc --size 1G --password-file pw.txt --no-hidden
`,
		run: runResize,
	})
}

func runResize(ctx context.Context, a *app, args []string) error {
	c := commands["resize"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	cf.addProtectFlags(fl)
	sizeArg := fl.String("size", "", "new container size, or N more (+N) or less (minus N) than now (K, M, G, T suffixes)")
	noHidden := fl.Bool("no-hidden", false, "VeraCrypt/TrueCrypt: the volume holds no hidden volume, so a shrink may give up the end of its data area")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 1, 1); err != nil {
		return err
	}
	if *sizeArg == "" {
		return usageError(errors.New("--size is required (e.g. --size +64M or --size 1G)"))
	}
	size, err := parseResizeSize(*sizeArg)
	if err != nil {
		return usageError(err)
	}
	path := fl.Arg(0)
	creds, o, err := cf.resolve(a, fl, false)
	if err != nil {
		return err
	}
	defer creds.Wipe()
	if o.ProtectHidden != nil {
		defer o.ProtectHidden.Wipe()
	}
	if o.Header != "" || o.Hidden || o.System {
		// Refused before the container is opened for writing.
		_, err := resize.Run(ctx, resize.Request{Options: o})
		return withCode(exitDamaged, err)
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	if err := refuseForeign("resize", dev); err != nil {
		return err
	}
	res, err := resize.Run(ctx, resize.Request{Dev: dev, Creds: creds, Options: o, Size: size, NoHidden: *noHidden, Tool: externalResizer{a}, Path: path})
	switch {
	case errors.Is(err, resize.ErrBadSize):
		return usageError(fmt.Errorf("--size %s: %w", *sizeArg, err))
	case errors.Is(err, resize.ErrRefused):
		return withCode(exitDestroy, err)
	case err != nil:
		return err
	}
	seg := ""
	if res.Format == "luks" {
		seg = " (the data segment runs to the end of the file)"
		if res.FixedSegment {
			seg = fmt.Sprintf(" (the data segment is %d bytes)", res.NewData)
		}
	}
	if res.Resumed {
		fmt.Fprintf(a.stdout, "Finished the interrupted resize of %s (a relative --size counts from the %d bytes it started from).\n", path, res.From)
	}
	fmt.Fprintf(a.stdout, "Resized %s: container %d → %d bytes, data area %d → %d bytes%s.\n%s\n", path, res.OldSize, res.NewSize, res.OldData, res.NewData, seg, res.Filesystem)
	return nil
}

// parseResizeSize reads --size: N, +N or -N.
func parseResizeSize(s string) (resize.Size, error) {
	t := strings.TrimSpace(s)
	var rel byte
	if t != "" && (t[0] == '+' || t[0] == '-') {
		rel, t = t[0], t[1:]
	}
	n, err := parseSize(t)
	if err == nil && n == 0 && rel == 0 {
		err = fmt.Errorf("invalid size %q: a container needs more than 0 bytes", s)
	}
	return resize.Size{Rel: rel, Amount: n}, err
}
