package external

import (
	"context"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/internal/progress"
)

// resizers are the filesystems whose own tool resizes them.
var resizers = map[string]Tool{
	"ext2": {"resize2fs", "e2fsprogs"}, "ext3": {"resize2fs", "e2fsprogs"}, "ext4": {"resize2fs", "e2fsprogs"},
	"ntfs": {"ntfsresize", "ntfs-3g"},
}

// Resizes reports whether filesystem type typ is resized by its own tool
// here.
func Resizes(typ string) bool {
	_, ok := resizers[typ]
	return ok
}

// Resize makes the filesystem of type typ on v declare size bytes
// (v.Size() for a grow to the whole data area) with its own tool, and
// says what it did. The copy is checked first (resize2fs insists on a
// fresh e2fsck -f: problems it cannot mend are ErrUnfixable); a tool that
// refuses (the files do not fit) is ErrRefused. Either leaves v as it
// was: only the write back changes v, and a kill during it leaves the
// filesystem half resized, which the tool's checker must mend (resize2fs
// and ntfsresize keep no journal of their own here).
func Resize(ctx context.Context, v Target, typ string, size int64, env Env) (string, error) {
	tool := resizers[typ]
	if err := tool.Missing("resizing " + typ); err != nil {
		return "", err
	}
	// ntfsresize cannot find the mount state of a /dev/fd path.
	named := tool.Name == "ntfsresize"
	img, err := newImage(v.Size(), named, env)
	if err != nil {
		return "", fmt.Errorf("scratch image for %s: %w", tool.Name, err)
	}
	defer img.Close()
	if err := img.CopyOut(ctx, v, "Reading", env); err != nil {
		return "", err
	}
	var args []string
	if tool.Name == "resize2fs" {
		code, out, err := img.Run(ctx, Tool{"e2fsck", "e2fsprogs"}, "-fy", img.path)
		if err != nil {
			return "", err
		}
		if code&^3 != 0 {
			return "", failf(ErrUnfixable, "resize: e2fsck -fy finds problems it cannot mend (nothing changed):\n%s", toolLines(out, img.path))
		}
		args = []string{"-f", img.path, fmt.Sprintf("%dK", size>>10)}
	} else {
		args = []string{"-f", "-P", "-s", fmt.Sprint(size), img.path}
	}
	code, out, err := img.Run(ctx, tool, args...)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", failf(ErrRefused, "resize: %s cannot make the %s filesystem %d bytes (nothing changed):\n%s", tool.Name, typ, size, strings.TrimSpace(toolLines(out, img.path)))
	}
	// resize2fs cuts a shrunk image file: past its end is given up.
	changed, err := img.WriteBackTo(ctx, v, min(size, v.Size()))
	if err != nil {
		return "", fmt.Errorf("writing %s's changes back (%d bytes written; run 'cryptvol fsck --repair'): %w", tool.Name, changed, err)
	}
	return fmt.Sprintf("The %s filesystem now declares %d bytes (%s; %s of the volume rewritten).", typ, size, tool.Name, progress.FormatSize(changed)), nil
}
