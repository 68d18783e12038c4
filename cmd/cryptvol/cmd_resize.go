package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
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
then the primary header; then ext2/3/4 and NTFS are grown to the new data
area by resize2fs and ntfsresize, run on a decrypted copy as fsck runs
e2fsck. FAT and exFAT keep their size (growing them is not built in yet):
the space is there, and the volume opens in VeraCrypt with its new size.
Shrink: the filesystem is shrunk first (FAT: only free clusters at its end are
given up; ext2/3/4 and NTFS: resize2fs and ntfsresize, which move data; exFAT
is refused), then the headers are rewritten, then the file
is truncated. A shrink that the filesystem cannot follow changes nothing and
exits 5.

A kill at any point leaves a volume that opens, with every file, at its old or
its new size; run the same command again (with an absolute --size) to finish.

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
	rel, amount, err := parseResizeSize(*sizeArg)
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
	if o.Header != "" {
		return withCode(exitDamaged, errors.New("resize: a volume with a detached header (--header) is not supported"))
	}
	if o.Hidden || o.System {
		return withCode(exitDamaged, errors.New("resize: a hidden volume lies inside its outer one and system encryption in its partition: resize the outer volume (with --protect-hidden and the hidden credentials) or the container"))
	}
	dev, err := volume.OpenDevice(path, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	if err := refuseForeign("resize", dev); err != nil {
		return err
	}
	v, err := volume.OpenDeviceWith(ctx, dev, dev, creds, volume.Options{Type: o.Type, Hash: o.Hash, Encryption: o.Encryption, Warn: o.Warn})
	if err != nil {
		return err
	}
	if luks.Present(dev) {
		return resizeLUKS(ctx, a, creds, o, dev, v, path, rel, amount)
	}
	oldData := v.Size()
	oldSize := tcrypt.ContainerSizeFor(oldData)
	newSize := targetSize(rel, amount, oldSize)
	if newSize < tcrypt.MinResizeSize {
		v.Close()
		return usageError(fmt.Errorf("--size %s: the container would be %d bytes, fewer than the %d its two header groups and one block need", *sizeArg, newSize, tcrypt.MinResizeSize))
	}
	if o.ProtectHidden != nil && newSize < oldSize {
		v.Close()
		return withCode(exitDestroy, fmt.Errorf("resize: refused: shrinking an outer volume would cut off its hidden volume, which lies at the end of the outer one's data area (nothing changed)"))
	}
	if !*noHidden && newSize < oldSize {
		// A hidden volume lives in the outer filesystem's free space at
		// the end, exactly what a shrink gives up, and is invisible
		// without its password.
		v.Close()
		return withCode(exitDestroy, fmt.Errorf("resize: refused: a shrink gives up the end of the data area, where a hidden volume would lie, and one cannot be seen without its password; give --no-hidden if %s holds none (nothing changed)", path))
	}
	newData := tcrypt.DataSizeFor(newSize)
	fsNote, err := resizeFilesystem(ctx, a, v, oldData, newData)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	rdev := &resizeDevice{FileDevice: dev, size: dev.Size()}
	was := rdev.size
	if newSize > rdev.size {
		if err := dev.Truncate(newSize); err != nil {
			return err
		}
		rdev.size = newSize
	}
	if err := tcrypt.Resize(ctx, rdev, creds, o, newSize); err != nil {
		if errors.Is(err, volume.ErrWrongPassword) && was < newSize {
			// The hidden volume's credentials were wrong: nothing was
			// written but the extension, which goes again.
			dev.Truncate(was)
		}
		if errors.Is(err, tcrypt.ErrResizeRefused) {
			return withCode(exitDestroy, err)
		}
		return err
	}
	if rdev.size > newSize {
		if err := dev.Truncate(newSize); err != nil {
			return err
		}
		if err := dev.Sync(); err != nil {
			return err
		}
	}
	if fsNote == "" {
		rdev.size = newSize
		if fsNote, err = growFilesystem(ctx, a, rdev, creds, o); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.stdout, "Resized %s: container %d → %d bytes, data area %d → %d bytes.\n%s\n", path, oldSize, newSize, oldData, newData, fsNote)
	return nil
}

// resizeFilesystem shrinks the filesystem on v to fit newData bytes (a
// grow leaves it as it is) and says what it did.
func resizeFilesystem(ctx context.Context, a *app, v *volume.Volume, oldData, newData int64) (string, error) {
	fsi := probeFilesystem(v)
	if newData >= oldData {
		if fsi == nil {
			return "No filesystem recognised inside: nothing else to grow.", nil
		}
		if _, ok := externalResizers[fsi.Type]; ok {
			return "", nil // grown after the headers (growFilesystem)
		}
		return fmt.Sprintf("The %s filesystem keeps its size: growing it is not built in yet.", fsi.Type), nil
	}
	if fsi == nil {
		return "", withCode(exitDestroy, errors.New("resize: no filesystem recognised inside: cannot prove a shrink keeps the data (nothing changed)"))
	}
	if _, ok := externalResizers[fsi.Type]; ok {
		return resizeExternal(ctx, a, v, fsi.Type, newData)
	}
	got, err := filesystem.Shrink(fsi.Type, v, oldData, newData)
	switch {
	case errors.Is(err, filesystem.ErrUnsupported):
		return "", withCode(exitDamaged, fmt.Errorf("resize: shrinking a %s filesystem is not supported yet (nothing changed): %w", fsi.Type, err))
	case errors.Is(err, filesystem.ErrCannotShrink):
		return "", withCode(exitDestroy, fmt.Errorf("resize: %w (nothing changed)", err))
	case err != nil:
		return "", err
	case got > newData:
		return "", withCode(exitDestroy, fmt.Errorf("resize: the %s filesystem shrinks to %d bytes at least, more than the %d the new size leaves (nothing changed)", fsi.Type, got, newData))
	}
	if err := v.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("The %s filesystem now declares %d bytes.", fsi.Type, got), nil
}

// resizeLUKS resizes a LUKS file container: the filesystem shrunk first
// on a shrink, the data segment's size rewritten where the LUKS2 header
// fixes one (LUKS1 and LUKS2 "dynamic" segments run to the end of the
// file and stay so), the file extended before the header on a grow and
// truncated after it on a shrink. v is the unlocked volume (closed here).
func resizeLUKS(ctx context.Context, a *app, creds volume.Credentials, o volume.Options, dev *volume.FileDevice, v *volume.Volume, path string, rel byte, amount int64) error {
	oldData := v.Size()
	offset, fixed, err := luks.DataLayout(dev)
	if err != nil {
		v.Close()
		return err
	}
	oldSize := dev.Size()
	newSize := targetSize(rel, amount, oldSize)
	if newSize < offset+4096 {
		v.Close()
		return usageError(fmt.Errorf("the container would be %d bytes, fewer than its %d-byte header and one 4 KiB block", newSize, offset))
	}
	newData := newSize - offset
	fsNote, err := resizeFilesystem(ctx, a, v, oldData, newData)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if newSize > oldSize {
		if err := dev.Truncate(newSize); err != nil {
			return err
		}
	}
	if fixed != 0 {
		if err := luks.SetDataSize(dev, newData); err != nil {
			return err
		}
	}
	if newSize < oldSize {
		if err := dev.Truncate(newSize); err != nil {
			return err
		}
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	if fsNote == "" {
		if fsNote, err = growFilesystem(ctx, a, &resizeDevice{FileDevice: dev, size: newSize}, creds, o); err != nil {
			return err
		}
	}
	seg := "runs to the end of the file"
	if fixed != 0 {
		seg = fmt.Sprintf("is %d bytes", newData)
	}
	fmt.Fprintf(a.stdout, "Resized %s: container %d → %d bytes, data area %d → %d bytes (the data segment %s).\n%s\n", path, oldSize, newSize, oldData, newData, seg, fsNote)
	return nil
}

// growFilesystem opens the volume on dev, now of its new size, and grows
// an ext2/3/4 or NTFS filesystem inside to the whole data area with its
// own tool.
func growFilesystem(ctx context.Context, a *app, dev volume.Device, creds volume.Credentials, o volume.Options) (string, error) {
	v, err := volume.OpenDeviceWith(ctx, dev, dev, creds, volume.Options{Type: o.Type, Hash: o.Hash, Encryption: o.Encryption, Warn: o.Warn})
	if err != nil {
		return "", err
	}
	defer v.Close()
	fsi := probeFilesystem(v)
	if fsi == nil {
		return "No filesystem recognised inside.", nil
	}
	return resizeExternal(ctx, a, v, fsi.Type, v.Size())
}

// parseResizeSize reads --size: N, +N or -N.
func parseResizeSize(s string) (rel byte, n int64, err error) {
	t := strings.TrimSpace(s)
	if t != "" && (t[0] == '+' || t[0] == '-') {
		rel, t = t[0], t[1:]
	}
	n, err = parseSize(t)
	if err == nil && n == 0 && rel == 0 {
		err = fmt.Errorf("invalid size %q: a container needs more than 0 bytes", s)
	}
	return rel, n, err
}

// resizeDevice is the container while it changes size: Size follows the
// truncations, where FileDevice's is the size at open time.
type resizeDevice struct {
	*volume.FileDevice
	size int64
}

func (d *resizeDevice) Size() int64 { return d.size }

// targetSize is the container size --size asks for: amount itself, or
// amount more ('+') or less ('-') than old, rounded down to 4 KiB.
func targetSize(rel byte, amount, old int64) int64 {
	n := amount
	switch rel {
	case '+':
		n = old + amount
	case '-':
		n = old - amount
	}
	return n - n%4096
}
