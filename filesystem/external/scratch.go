package external

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
)

// Env is what the runs here need from their caller.
type Env struct {
	// Progress returns the bar of a copy of total bytes (nil: none).
	Progress func(label string, total int64) Bar
	// Alive reports whether a process runs: the named scratch images
	// of commands that are gone are swept before a new one is made
	// (nil: none is swept).
	Alive func(pid int) bool
}

// Bar is a progress bar.
type Bar interface {
	Set(done int64)
	Finish() float64
}

type noBar struct{}

func (noBar) Set(int64)       {}
func (noBar) Finish() float64 { return 0 }

func (e Env) bar(label string, total int64) Bar {
	if e.Progress == nil {
		return noBar{}
	}
	return e.Progress(label, total)
}

// Target is what a scratch image is copied into: a volume's data area
// (*volume.Volume, or a layer over it that orders the writes).
type Target interface {
	io.ReaderAt
	io.WriterAt
	Size() int64
	SectorSize() int
	Sync() error
}

// Image is a sparse temporary file as large as a volume's data area, for
// a tool to work on: the decrypted data is copied in or out through the
// Volume, never through a mount. It is removed by Close, and on Linux an
// unnamed one has no name at all once created (the tools open it as
// /dev/fd/3), so not even kill -9 leaves it behind.
type Image struct {
	f    *os.File
	name string // the file's name, until removed
	path string // what a tool is given
	dir  string // a named image's own directory
}

// NamedPrefix starts the directory of a named scratch image in $TMPDIR,
// followed by the PID of the process that made it.
const NamedPrefix = "cryptvol-scratch-"

// sweepNamed removes the named scratch images (decrypted copies of a
// data area) of processes that were killed before their Close.
func sweepNamed(alive func(pid int) bool) {
	if alive == nil {
		return
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), NamedPrefix+"*-*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), NamedPrefix), "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 || n == os.Getpid() || alive(n) {
			continue
		}
		if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
			os.RemoveAll(d)
		}
	}
}

// NewImage makes an unnamed scratch image of size bytes.
func NewImage(size int64) (*Image, error) { return newImage(size, false, Env{}) }

// NewNamedImage is a scratch image that keeps its name until Close, for a
// tool that refuses a /dev/fd path (ntfsresize cannot find its mount
// state). It lies in a directory of its own, readable by this uid only
// and named after this process; what a killed process left (env.Alive
// says it is gone) is removed first.
func NewNamedImage(size int64, env Env) (*Image, error) { return newImage(size, true, env) }

func newImage(size int64, named bool, env Env) (*Image, error) {
	dir := ""
	if named {
		sweepNamed(env.Alive)
		d, err := os.MkdirTemp("", fmt.Sprintf("%s%d-*", NamedPrefix, os.Getpid()))
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
	s := &Image{f: f, name: f.Name(), path: f.Name(), dir: dir}
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

// Path is the image's name as the tools are given it.
func (s *Image) Path() string { return s.path }

// Close removes the image.
func (s *Image) Close() error {
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

// Run runs tool with args (which name the image as Path) and returns its
// exit code and everything it printed. An error is returned only when it
// could not run or was interrupted.
func (s *Image) Run(ctx context.Context, tool Tool, args ...string) (int, string, error) {
	cmd := exec.CommandContext(ctx, tool.Name, args...)
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
		return -1, out.String(), fmt.Errorf("running %s: %w", tool.Name, err)
	}
	return 0, out.String(), nil
}

// chunk is the unit of the copies between a volume and its image.
const chunk = 1 << 20

// CopyIn writes the whole image over v's data area (zeros included: the
// tools assume the parts they did not write read as zero, which the
// decrypted data of a new volume does not), through the Volume, and
// syncs it.
func (s *Image) CopyIn(ctx context.Context, v Target, label string, env Env) error {
	size := v.Size()
	bar := env.bar(label, size)
	buf := make([]byte, chunk)
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

// CopyOut copies v's decrypted data area into the image, leaving the
// chunks that are all zeros as holes.
func (s *Image) CopyOut(ctx context.Context, v Target, label string, env Env) error {
	size := v.Size()
	bar := env.bar(label, size)
	buf := make([]byte, chunk)
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

// WriteBack writes into v the blocks of the image that differ from it
// (what a repair changed), syncs v, and returns how many bytes that was.
func (s *Image) WriteBack(ctx context.Context, v Target) (int64, error) {
	return s.WriteBackTo(ctx, v, v.Size())
}

// WriteBackTo is WriteBack of the first size bytes (a tool that shrank
// the filesystem also cut the image file there).
func (s *Image) WriteBackTo(ctx context.Context, v Target, size int64) (int64, error) {
	block := int64(max(v.SectorSize(), 4096))
	img, cur := make([]byte, chunk), make([]byte, chunk)
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

// Mkfs runs tool, a mkfs, on a scratch image of exactly v's size with
// args(the image's path), and copies the result into v (the whole data
// area, through v's own write path: no mount, no root) under a progress
// bar labelled label. The image goes whatever happens. The caller has
// checked tool.Missing (in time to say so before anything is written).
func Mkfs(ctx context.Context, v Target, tool Tool, args func(image string) []string, label string, env Env) error {
	img, err := NewImage(v.Size())
	if err != nil {
		return fmt.Errorf("scratch image for %s: %w", tool.Name, err)
	}
	defer img.Close()
	code, out, err := img.Run(ctx, tool, args(img.path)...)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%s failed (exit %d) on a %s data area:%s", tool.Name, code, progress.FormatSize(v.Size()), Indent(out))
	}
	return img.CopyIn(ctx, v, label, env)
}
