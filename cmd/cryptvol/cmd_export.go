package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cryptvol/cryptvol/internal/progress"
)

func init() {
	register(&command{
		name:    "export",
		summary: "write the decrypted data area to a file or stdout",
		usage: `Usage: cryptvol export VOLUME OUT|- [--force] [credentials]

Writes the decrypted data area of VOLUME, byte for byte, to OUT (or to
standard output with -). OUT is written to a temporary file beside it and
renamed when complete, so a failure never leaves a partial image; an existing
OUT is kept unless --force.

Example:
  cryptvol export secret.hc plain.img --password-file pw.txt
  cryptvol export disk.luks - --password-file pw.txt | fsck.fat -n /dev/stdin
`,
		run: runExport,
	})
}

func runExport(ctx context.Context, a *app, args []string) error {
	c := commands["export"]
	fs := newFlags(c, a)
	cf := addCredFlags(fs)
	force := fs.Bool("force", false, "overwrite OUT if it exists")
	if err := parseFlags(fs, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fs, 2, 2); err != nil {
		return err
	}
	out := fs.Arg(1)
	if out != "-" && !*force {
		if _, err := os.Lstat(out); err == nil {
			return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", out))
		}
	}
	v, err := openVolume(ctx, a, fs, cf, fs.Arg(0), true)
	if err != nil {
		return err
	}
	defer v.Close()
	if out == "-" {
		return copyVolume(ctx, a, a.stdout, v, v.Size())
	}
	return writeAtomically(out, func(w io.Writer) error {
		return copyVolume(ctx, a, w, v, v.Size())
	})
}

// copyVolume streams size bytes of r to w in large chunks, with a progress
// bar on a terminal.
func copyVolume(ctx context.Context, a *app, w io.Writer, r io.ReaderAt, size int64) error {
	bar := progress.New(a.stderr, "Exporting", size, stderrIsTerminal())
	buf := make([]byte, 4<<20)
	for off := int64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := int64(len(buf))
		if size-off < n {
			n = size - off
		}
		if _, err := r.ReadAt(buf[:n], off); err != nil && !(errors.Is(err, io.EOF) && n > 0) {
			return err
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return err
		}
		off += n
		bar.Set(off)
	}
	bar.Finish()
	return nil
}

func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }

// writeAtomically writes a new file through a temporary file in the same
// directory, renamed over path only when fill succeeds and is synced.
func writeAtomically(path string, fill func(w io.Writer) error) error {
	return writeAtomic(path, fill, true)
}

// writeAtomic is writeAtomically; without sync the data is not flushed
// before the rename (get -r syncs the whole tree once at the end instead:
// one fsync per small file would cost more than the copy itself).
func writeAtomic(path string, fill func(w io.Writer) error, sync bool) error {
	dir := "."
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			dir = path[:i+1]
			break
		}
	}
	tmp, err := os.CreateTemp(dir, ".cryptvol-*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err := fill(tmp); err != nil {
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(name, path); err != nil {
		return err
	}
	ok = true
	return nil
}
