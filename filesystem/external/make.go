package external

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
)

// mkfsTools are the filesystems made by their own programs, on a scratch
// image: NTFS by mkntfs, until a built-in formatter takes its place (and
// its line goes). FAT, exFAT and ext4 are made by filesystem.Format.
var mkfsTools = map[string]Tool{
	"ntfs": {Name: "mkntfs", Package: "ntfs-3g"},
}

// Makes reports whether Make makes a filesystem of typ: one of
// filesystem.Formattable (FAT and its variants, exFAT, ext4) or of
// mkfsTools (NTFS).
func Makes(typ string) bool {
	_, byTool := mkfsTools[typ]
	return byTool || slices.Contains(filesystem.Formattable, typ)
}

// MkfsTool returns the program Make runs to make typ, or nil when
// cryptvol makes it itself: a caller checks its Missing before anything
// is written.
func MkfsTool(typ string) *Tool {
	if t, ok := mkfsTools[typ]; ok {
		return &t
	}
	return nil
}

// Make writes a new, empty filesystem of o.Type over v's whole data area.
// ext4 gets blocks no smaller than v's sector (mkfs.ext4 -b) whatever
// o.MinBlockSize says: a LUKS2 volume has 4096-byte sectors by default,
// and below 512 MiB mkfs.ext4 would make 1 KiB blocks, which the kernel
// cannot mount from the decrypted device. NTFS is made by mkntfs on a
// scratch image copied in through v (no mount, no root; the image goes
// whatever happens); what names, in the error of a missing mkntfs, what
// asked for it. say hears what is being done ("Making ext4 ...") and
// filesystem.Format's note. Errors wrap filesystem.ErrTooSmall and
// ErrInvalidName (built in) and ErrNoTool.
func Make(ctx context.Context, v Target, o filesystem.FormatOptions, what string, env Env, say func(string)) error {
	if tool, ok := mkfsTools[o.Type]; ok {
		if err := tool.Missing(what); err != nil {
			return err
		}
		say("Making " + o.Type + " with " + tool.Name + " ...")
		args := func(image string) []string { return mkntfsArgs(o.Label, v.SectorSize(), image) }
		return Mkfs(ctx, v, tool, args, "Writing "+o.Type, env)
	}
	if strings.EqualFold(o.Type, "ext4") {
		if v.SectorSize() > 1024 {
			o.MinBlockSize = v.SectorSize()
		}
		say("Making ext4 ...")
	}
	note, err := filesystem.Format(v, v.Size(), o)
	if err != nil {
		return err
	}
	if note != "" {
		say(note)
	}
	return nil
}

// mkntfsArgs: quick (the image is sparse, so already zero), forced (a
// file, not a block device), with the volume's sector size (which mkntfs
// cannot learn from a file).
func mkntfsArgs(label string, sectorSize int, image string) []string {
	args := []string{"-Q", "-F", "-q", "-s", strconv.Itoa(sectorSize)}
	if label != "" {
		args = append(args, "-L", label)
	}
	return append(args, image)
}
