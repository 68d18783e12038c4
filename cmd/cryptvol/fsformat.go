package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/external"
	"github.com/cryptvol/cryptvol/volume"
)

// formatSpec is what --filesystem, --label and --serial of create and
// format ask for.
type formatSpec struct {
	fs      string // a key of formatters, or "none"
	label   string
	serial  uint32 // 0: random (FAT and exFAT)
	fatType string // "fat" (by size), "fat12", "fat16" or "fat32"
}

// preflight says, before anything is written, that the tool the
// filesystem is made with is missing.
func (s *formatSpec) preflight() error {
	if s == nil || s.fs == "none" || formatters[s.fs].tool == nil {
		return nil
	}
	return toolError(formatters[s.fs].tool.Missing("--filesystem " + s.fs))
}

// formatFunc writes an empty filesystem over v's whole data area.
type formatFunc func(ctx context.Context, a *app, v formatTarget, spec *formatSpec) error

// formatter makes one filesystem.
type formatter struct {
	format formatFunc
	tool   *external.Tool // the program format runs; nil when built in
}

// formatters are the filesystems create and format make, by the name
// --filesystem gives. FAT, exFAT and ext4 are built in; NTFS is made by
// mkntfs on a scratch image (externalFormatter), until a built-in
// formatter replaces it with a line like "ext4": {format: formatExt4}.
var formatters = map[string]formatter{
	"fat":   {format: formatFAT},
	"exfat": {format: formatExFAT},
	"ext4":  {format: formatExt4},
	"ntfs":  externalFormatter(external.Tool{Name: "mkntfs", Package: "ntfs-3g"}, mkntfsArgs),
}

// formatExt4 makes what mkfs.ext4 makes for the size, with blocks no
// smaller than the volume's sector (mkfs.ext4 -b): a LUKS2 volume has
// 4096-byte sectors by default, and below 512 MiB mkfs.ext4 would make
// 1 KiB blocks, which the kernel cannot mount from the decrypted device.
func formatExt4(ctx context.Context, a *app, v formatTarget, spec *formatSpec) error {
	minBlock := 0
	if v.SectorSize() > 1024 {
		minBlock = v.SectorSize()
	}
	a.infof("Making ext4 ...")
	return formatBuiltIn(a, v, filesystem.FormatOptions{Type: "ext4", Label: spec.label, MinBlockSize: minBlock}, "make the volume larger")
}

// formatBuiltIn makes a filesystem cryptvol makes itself; tooSmall is the
// advice when the volume is too small for it.
func formatBuiltIn(a *app, v formatTarget, o filesystem.FormatOptions, tooSmall string) error {
	note, err := filesystem.Format(v, v.Size(), o)
	switch {
	case errors.Is(err, filesystem.ErrTooSmall):
		return usageError(fmt.Errorf("%v: %s", err, tooSmall))
	case errors.Is(err, filesystem.ErrInvalidName):
		return usageError(err)
	case err != nil:
		return err
	}
	if note != "" {
		a.infof("%s", note)
	}
	return nil
}

// filesystemNames is the list help texts and errors show.
const filesystemNames = "fat, exfat, ext4, ntfs or none"

// parseFormatSpec reads --filesystem, --label and --serial. FAT's
// variants (vfat, fat12, fat16, fat32) choose the FAT type.
func parseFormatSpec(fsType, label, serial string) (*formatSpec, error) {
	s := &formatSpec{fs: strings.ToLower(fsType), label: label}
	switch s.fs {
	case "vfat", "fat12", "fat16", "fat32", "fat":
		s.fs, s.fatType = "fat", strings.TrimPrefix(s.fs, "v")
		if serial != "" {
			n, err := parseSerial(serial)
			if err != nil {
				return nil, err
			}
			s.serial = n
		}
		return s, nil
	case "ext2", "ext3":
		return nil, usageError(fmt.Errorf("--filesystem %s: cryptvol makes ext4 (which reads and writes like ext3 and ext2 where it matters); want %s", fsType, filesystemNames))
	case "none":
		return s, nil
	}
	if formatters[s.fs].format == nil {
		return nil, usageError(fmt.Errorf("--filesystem %q: want %s", fsType, filesystemNames))
	}
	if serial != "" {
		if s.fs != "exfat" {
			return nil, usageError(fmt.Errorf("--serial is for FAT and exFAT; %s gets a random one", s.fs))
		}
		n, err := parseSerial(serial)
		if err != nil {
			return nil, err
		}
		s.serial = n
	}
	return s, nil
}

// parseSerial reads a volume serial spelled XXXX-XXXX.
func parseSerial(serial string) (uint32, error) {
	s := strings.ReplaceAll(serial, "-", "")
	n, err := strconv.ParseUint(s, 16, 32)
	if err != nil || len(s) != 8 {
		return 0, usageError(fmt.Errorf("--serial %q: want eight hex digits like DEAD-BEEF", serial))
	}
	return uint32(n), nil
}

// formatTarget is what a formatter writes to.
type formatTarget = filesystem.FormatTarget

// formatOver formats v, which may hold a filesystem, in the order of
// filesystem.FormatOver: a power cut leaves the old filesystem, none, or
// the new one, never a damaged one.
func formatOver(ctx context.Context, a *app, v *volume.Volume, spec *formatSpec) error {
	return filesystem.FormatOver(v, spec.fs, func(t filesystem.FormatTarget) error {
		return formatters[spec.fs].format(ctx, a, t, spec)
	})
}

// formatVolume writes spec's filesystem into v ("none" writes nothing).
func formatVolume(ctx context.Context, a *app, v *volume.Volume, spec *formatSpec) error {
	if spec == nil || spec.fs == "none" {
		return nil
	}
	if err := formatters[spec.fs].format(ctx, a, v, spec); err != nil {
		return err
	}
	return v.Sync()
}

func formatFAT(ctx context.Context, a *app, v formatTarget, spec *formatSpec) error {
	return formatBuiltIn(a, v, filesystem.FormatOptions{Type: spec.fatType, Label: spec.label, Serial: spec.serial}, "make the volume larger or use --filesystem none")
}

// formatExFAT makes what mkfs.exfat makes for the size (below about 3 MiB
// with the largest alignment that fits; filesystem.Format says so).
func formatExFAT(ctx context.Context, a *app, v formatTarget, spec *formatSpec) error {
	return formatBuiltIn(a, v, filesystem.FormatOptions{Type: "exfat", Label: spec.label, Serial: spec.serial}, "make the volume larger")
}

func mkntfsArgs(label string, sectorSize int, image string) []string {
	// Quick (the image is sparse, so already zero), forced (a file, not
	// a block device), with the volume's sector size (which mkntfs
	// cannot learn from a file).
	args := []string{"-Q", "-F", "-q", "-s", strconv.Itoa(sectorSize)}
	if label != "" {
		args = append(args, "-L", label)
	}
	return append(args, image)
}

// externalFormatter runs tool on a scratch image of exactly the data
// area's size and copies the result into the volume through its own
// write path: no mount, no root. The image goes whatever happens.
func externalFormatter(tool external.Tool, args func(label string, sectorSize int, image string) []string) formatter {
	return formatter{tool: &tool, format: func(ctx context.Context, a *app, v formatTarget, spec *formatSpec) error {
		if err := tool.Missing("--filesystem " + spec.fs); err != nil {
			return toolError(err)
		}
		a.infof("Making %s with %s ...", spec.fs, tool.Name)
		imageArgs := func(image string) []string { return args(spec.label, v.SectorSize(), image) }
		return external.Mkfs(ctx, v, tool, imageArgs, "Writing "+spec.fs, a.externalEnv())
	}}
}

// eraseSignatures is format --filesystem none: the first and the last MiB
// of the data area are zeroed, where every filesystem cryptvol recognises
// keeps its signature (boot sector, superblock, backup boot sector). The
// signature sector goes first, flushed: a power cut in the larger writes
// then cannot leave the old filesystem recognised with its tables zeroed.
func eraseSignatures(v *volume.Volume) error {
	if err := filesystem.DropSignature(v); err != nil {
		return err
	}
	zero := make([]byte, min(v.Size(), 1<<20))
	if _, err := v.WriteAt(zero, 0); err != nil {
		return err
	}
	if _, err := v.WriteAt(zero, v.Size()-int64(len(zero))); err != nil {
		return err
	}
	return v.Sync()
}
