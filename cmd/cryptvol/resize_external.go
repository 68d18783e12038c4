package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
)

// externalResizers are the filesystems whose own tool resizes them, run
// as fsck runs e2fsck and ntfsfix: on a decrypted copy of the data area
// in a scratch image, what it changed written back through the volume.
var externalResizers = map[string]externalTool{
	"ext2": {"resize2fs", "e2fsprogs"}, "ext3": {"resize2fs", "e2fsprogs"}, "ext4": {"resize2fs", "e2fsprogs"},
	"ntfs": {"ntfsresize", "ntfs-3g"},
}

// externalResizer is the resize.Tool of the command line: the tools of
// externalResizers on a scratch copy.
type externalResizer struct{ a *app }

func (externalResizer) Resizes(typ string) bool {
	_, ok := externalResizers[typ]
	return ok
}

func (e externalResizer) Resize(ctx context.Context, v *volume.Volume, typ string, size int64) (string, error) {
	return resizeExternal(ctx, e.a, v, typ, size)
}

// resizeExternal makes the filesystem of type typ on v declare size
// bytes (v.Size() for a grow to the whole data area) with its own tool.
// The copy is checked first (resize2fs insists on a fresh e2fsck -f); a
// tool that refuses (the files do not fit) leaves v as it was. Only the
// write back changes v: a kill during it leaves the filesystem half
// resized, which the tool's checker must mend (resize2fs and ntfsresize
// keep no journal of their own here).
func resizeExternal(ctx context.Context, a *app, v *volume.Volume, typ string, size int64) (string, error) {
	tool := externalResizers[typ]
	if err := tool.missing("resizing " + typ); err != nil {
		return "", err
	}
	newImage := newScratchImage
	if tool.name == "ntfsresize" {
		newImage = newNamedScratchImage
	}
	img, err := newImage(v.Size())
	if err != nil {
		return "", withCode(exitIO, fmt.Errorf("scratch image for %s: %w", tool.name, err))
	}
	defer img.Close()
	if err := img.copyOut(ctx, a, "Reading", v); err != nil {
		return "", err
	}
	var args []string
	if tool.name == "resize2fs" {
		code, out, err := img.run(ctx, externalTool{"e2fsck", "e2fsprogs"}, "-fy", img.path)
		if err != nil {
			return "", err
		}
		if code&^3 != 0 {
			return "", withCode(exitDamaged, fmt.Errorf("resize: e2fsck -fy finds problems it cannot mend (nothing changed):\n%s", toolLines(out, img.path)))
		}
		args = []string{"-f", img.path, fmt.Sprintf("%dK", size>>10)}
	} else {
		args = []string{"-f", "-P", "-s", fmt.Sprint(size), img.path}
	}
	code, out, err := img.run(ctx, tool, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", withCode(exitDestroy, fmt.Errorf("resize: %s cannot make the %s filesystem %d bytes (nothing changed):\n%s", tool.name, typ, size, strings.TrimSpace(toolLines(out, img.path))))
	}
	// resize2fs cuts a shrunk image file: past its end is given up.
	changed, err := img.writeBackTo(ctx, v, min(size, v.Size()))
	if err != nil {
		return "", fmt.Errorf("writing %s's changes back (%d bytes written; run 'cryptvol fsck --repair'): %w", tool.name, changed, err)
	}
	return fmt.Sprintf("The %s filesystem now declares %d bytes (%s; %s of the volume rewritten).", typ, size, tool.name, humanSize(changed)), nil
}
