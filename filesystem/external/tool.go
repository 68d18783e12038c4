// Package external runs the filesystems' own programs — mkfs.ext4,
// e2fsck, resize2fs, mkntfs, ntfsfix, ntfsresize, fsck.fat, fsck.exfat —
// on a volume's decrypted data without a mount and without root: the
// data area is copied into a scratch image (a sparse temporary file, on
// Linux without a name), the tool works on it, and what it changed is
// written back through the Volume, block by block.
package external

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Tool is a program of another project and the Debian package it comes
// in.
type Tool struct {
	Name, Package string
}

// ErrNoTool is wrapped by Missing's error: the program is not installed.
var ErrNoTool = errors.New("not installed")

// ErrUnfixable is wrapped when a filesystem's checker finds problems it
// cannot mend, so the operation asked for was not started.
var ErrUnfixable = errors.New("problems the checker cannot mend")

// ErrRefused is wrapped when a tool refused the change asked of it (a
// shrink below the files); nothing was changed.
var ErrRefused = errors.New("refused by the tool")

// failure is an error with its own message that is one of the sentinels
// above for errors.Is.
type failure struct {
	msg  string
	kind error
}

func (f *failure) Error() string { return f.msg }
func (f *failure) Unwrap() error { return f.kind }

func failf(kind error, format string, args ...any) error {
	return &failure{fmt.Sprintf(format, args...), kind}
}

// Missing says, when the tool is not on PATH, what to install: an error
// wrapping ErrNoTool that names what needed it.
func (t Tool) Missing(what string) error {
	if _, err := exec.LookPath(t.Name); err == nil {
		return nil
	}
	return fmt.Errorf("%s needs %s, which is %w (Debian and Ubuntu: apt-get install %s)", what, t.Name, ErrNoTool, t.Package)
}

// Indent is a tool's output indented for an error message ("" for none).
func Indent(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	return "\n  " + strings.ReplaceAll(out, "\n", "\n  ")
}

// toolLines is a tool's output with the image named IMAGE, less the
// ntfs-3g tools' complaint that a /dev/fd path is not in /proc/mounts.
func toolLines(out, imgPath string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		if strings.HasPrefix(l, "Failed to determine whether "+imgPath+" is mounted") {
			continue
		}
		b.WriteString(strings.ReplaceAll(l, imgPath, "IMAGE"))
	}
	return b.String()
}
