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
	fs      string // "fat", "exfat", "ext4", "ntfs" (external.Makes) or "none"
	label   string
	serial  uint32 // 0: random (FAT and exFAT)
	fatType string // "fat" (by size), "fat12", "fat16" or "fat32"
}

// preflight says, before anything is written, that the tool the
// filesystem is made with is missing.
func (s *formatSpec) preflight() error {
	if s == nil || s.fs == "none" {
		return nil
	}
	if tool := external.MkfsTool(s.fs); tool != nil {
		return toolError(tool.Missing("--filesystem " + s.fs))
	}
	return nil
}

// formatTarget is what a formatter writes to.
type formatTarget = filesystem.FormatTarget

// formatWith writes spec's filesystem over v's whole data area
// (external.Make), with the command line's messages and exit codes.
func formatWith(ctx context.Context, a *app, v formatTarget, spec *formatSpec) error {
	o := filesystem.FormatOptions{Type: spec.fs, Label: spec.label, Serial: spec.serial}
	if spec.fs == "fat" && spec.fatType != "" {
		o.Type = spec.fatType
	}
	err := external.Make(ctx, v, o, "--filesystem "+spec.fs, a.externalEnv(), func(msg string) { a.infof("%s", msg) })
	switch {
	case errors.Is(err, filesystem.ErrTooSmall):
		advice := "make the volume larger"
		if spec.fs == "fat" {
			advice += " or use --filesystem none"
		}
		return usageError(fmt.Errorf("%v: %s", err, advice))
	case errors.Is(err, filesystem.ErrInvalidName):
		return usageError(err)
	}
	return toolError(err)
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
	if !external.Makes(s.fs) {
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

// formatOver formats v, which may hold a filesystem, in the order of
// filesystem.FormatOver: a power cut leaves the old filesystem, none, or
// the new one, never a damaged one.
func formatOver(ctx context.Context, a *app, v *volume.Volume, spec *formatSpec) error {
	return filesystem.FormatOver(v, spec.fs, func(t filesystem.FormatTarget) error {
		return formatWith(ctx, a, t, spec)
	})
}

// formatVolume writes spec's filesystem into v ("none" writes nothing).
func formatVolume(ctx context.Context, a *app, v *volume.Volume, spec *formatSpec) error {
	if spec == nil || spec.fs == "none" {
		return nil
	}
	if err := formatWith(ctx, a, v, spec); err != nil {
		return err
	}
	return v.Sync()
}
