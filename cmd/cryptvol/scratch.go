package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/cryptvol/cryptvol/internal/progress"
	"github.com/cryptvol/cryptvol/mount"
	"github.com/cryptvol/cryptvol/volume"
)

// externalTool is a program of another project that cryptvol runs on a
// plain image of a volume's data area (mkfs.ext4, e2fsck, mkntfs,
// ntfsfix, ...), and the Debian package it comes in.
type externalTool struct {
	name, pkg string
}

// errNoTool is wrapped by missing's error: the program is not installed.
var errNoTool = errors.New("not installed")

// missing says, when the tool is not on PATH, what to install.
func (t externalTool) missing(what string) error {
	if _, err := exec.LookPath(t.name); err == nil {
		return nil
	}
	return withCode(exitNoTool, fmt.Errorf("%s needs %s, which is %w (Debian and Ubuntu: apt-get install %s)", what, t.name, errNoTool, t.pkg))
}

// scratchImage is a sparse temporary file as large as a volume's data
// area, for an external tool to work on: cryptvol copies the decrypted
// data in or out through the Volume, never through a mount. It is
// removed by Close, and on Linux it has no name at all once created (the
// tools open it as /dev/fd/3), so not even kill -9 leaves it behind.
type scratchImage struct {
	f    *os.File
	name string // the file's name, until removed
	path string // what a tool is given
	dir  string // a named image's own directory
}

// namedScratchPrefix starts the directory of a named scratch image in
// $TMPDIR, followed by the PID of the command that made it.
const namedScratchPrefix = "cryptvol-scratch-"

// sweepNamedScratch removes the named scratch images (decrypted copies of
// a data area) of commands that were killed before their Close.
func sweepNamedScratch() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), namedScratchPrefix+"*-*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), namedScratchPrefix), "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 || n == os.Getpid() || mount.ProcessAlive(n) {
			continue
		}
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			os.RemoveAll(d)
		}
	}
}

func newScratchImage(size int64) (*scratchImage, error) { return newScratch(size, false) }

// newNamedScratchImage is a scratch image that keeps its name until
// Close, for a tool that refuses a /dev/fd path (ntfsresize cannot find
// its mount state). It lies in a directory of its own, readable by this
// uid only and named after this process; what a killed command left (its
// process gone) is removed by the next command that makes one.
func newNamedScratchImage(size int64) (*scratchImage, error) { return newScratch(size, true) }

func newScratch(size int64, named bool) (*scratchImage, error) {
	dir := ""
	if named {
		sweepNamedScratch()
		d, err := os.MkdirTemp("", fmt.Sprintf("%s%d-*", namedScratchPrefix, os.Getpid()))
		if err != nil {
			return nil, err
		}
		dir = d
	}
	f, err := os.CreateTemp(dir, "cryptvol-image-*.img")
	if err != nil {
		if dir != "" {
			os.Remove(dir)
		}
		return nil, err
	}
	s := &scratchImage{f: f, name: f.Name(), path: f.Name(), dir: dir}
	if err := f.Truncate(size); err != nil {
		s.Close()
		return nil, err
	}
	if runtime.GOOS == "linux" && !named {
		// Reopened through /dev/fd by the tools, which works for a file
		// that is already unlinked.
		if err := os.Remove(s.name); err == nil {
			s.name, s.path = "", "/dev/fd/3"
		}
	}
	return s, nil
}

// Close removes the image.
func (s *scratchImage) Close() error {
	err := s.f.Close()
	if s.name != "" {
		if rerr := os.Remove(s.name); err == nil {
			err = rerr
		}
	}
	if s.dir != "" {
		os.Remove(s.dir)
	}
	return err
}

// run runs tool with args (which name the image as s.path) and returns
// its exit code and everything it printed. An error is returned only when
// it could not run or was interrupted.
func (s *scratchImage) run(ctx context.Context, tool externalTool, args ...string) (int, string, error) {
	cmd := exec.CommandContext(ctx, tool.name, args...)
	cmd.ExtraFiles = []*os.File{s.f}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, out.String(), ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), out.String(), nil
	}
	if err != nil {
		return -1, out.String(), fmt.Errorf("running %s: %w", tool.name, err)
	}
	return 0, out.String(), nil
}

// imageChunk is the unit of the copies between a volume and its image.
const imageChunk = 1 << 20

// copyIn writes the whole image over v's data area (zeros included: the
// tools assume the parts they did not write read as zero, which the
// decrypted data of a new volume does not), through the Volume.
func (s *scratchImage) copyIn(ctx context.Context, a *app, label string, v formatTarget) error {
	size := v.Size()
	bar := progress.New(a.stderr, label, size, a.showProgress())
	buf := make([]byte, imageChunk)
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(len(buf)), size-off))
		if _, err := s.f.ReadAt(buf[:n], off); err != nil && err != io.EOF {
			return err
		}
		if _, err := v.WriteAt(buf[:n], off); err != nil {
			return err
		}
		off += int64(n)
		bar.Set(off)
	}
	bar.Finish()
	return v.Sync()
}

// copyOut copies v's decrypted data area into the image, leaving the
// chunks that are all zeros as holes.
func (s *scratchImage) copyOut(ctx context.Context, a *app, label string, v *volume.Volume) error {
	size := v.Size()
	bar := progress.New(a.stderr, label, size, a.showProgress())
	buf := make([]byte, imageChunk)
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int(min(int64(len(buf)), size-off))
		if _, err := v.ReadAt(buf[:n], off); err != nil && err != io.EOF {
			return err
		}
		if !allZero(buf[:n]) {
			if _, err := s.f.WriteAt(buf[:n], off); err != nil {
				return err
			}
		}
		off += int64(n)
		bar.Set(off)
	}
	bar.Finish()
	return nil
}

// writeBack writes into v the blocks of the image that differ from it
// (what a repair changed) and returns how many bytes that was.
func (s *scratchImage) writeBack(ctx context.Context, v *volume.Volume) (int64, error) {
	return s.writeBackTo(ctx, v, v.Size())
}

// writeBackTo is writeBack of the first size bytes (a tool that shrank
// the filesystem also cut the image file there).
func (s *scratchImage) writeBackTo(ctx context.Context, v *volume.Volume, size int64) (int64, error) {
	block := int64(max(v.SectorSize(), 4096))
	img, cur := make([]byte, imageChunk), make([]byte, imageChunk)
	var changed int64
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return changed, err
		}
		n := min(int64(len(img)), size-off)
		if _, err := s.f.ReadAt(img[:n], off); err != nil && err != io.EOF {
			return changed, err
		}
		if _, err := v.ReadAt(cur[:n], off); err != nil && err != io.EOF {
			return changed, err
		}
		for b := int64(0); b < n; b += block {
			e := min(b+block, n)
			if !bytes.Equal(img[b:e], cur[b:e]) {
				if _, err := v.WriteAt(img[b:e], off+b); err != nil {
					return changed, err
				}
				changed += e - b
			}
		}
		off += n
	}
	return changed, v.Sync()
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// toolOutput is a tool's output indented for an error message.
func toolOutput(out string) string {
	out = strings.TrimSpace(out)
	if out == "" {
		return ""
	}
	return "\n  " + strings.ReplaceAll(out, "\n", "\n  ")
}
