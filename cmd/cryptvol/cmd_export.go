package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/internal/progress"
)

func init() {
	register(&command{
		name:    "export",
		summary: "write the decrypted data area to a file or stdout",
		usage: `Usage: cryptvol export VOLUME OUT|- [--force] [credentials]

Writes the decrypted data area of VOLUME, byte for byte, to OUT (or to
standard output with -). OUT is written to a temporary file beside it
(readable by its owner only) and renamed when complete, so a failure or
Ctrl-C never leaves a partial image, and the next export removes what a
killed one left; an existing OUT is kept unless --force (which keeps its
mode).

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
		err := copyVolume(ctx, a, a.stdout, v, v.Size())
		var ie *copyInterrupted
		if errors.As(err, &ie) {
			return interrupted("%s of %s written to standard output", humanSize(ie.done), humanSize(ie.total))
		}
		return err
	}
	err = writeAtomically(a, out, func(w io.Writer) error {
		return copyVolume(ctx, a, w, v, v.Size())
	})
	var ie *copyInterrupted
	if errors.As(err, &ie) {
		return interrupted("%s of %s exported; %s not written (its temporary file was removed)", humanSize(ie.done), humanSize(ie.total), out)
	}
	return err
}

// copyInterrupted is copyVolume stopped by a signal after done bytes.
type copyInterrupted struct{ done, total int64 }

func (e *copyInterrupted) Error() string { return "interrupted" }
func (e *copyInterrupted) Unwrap() error { return context.Canceled }

// copyVolume streams size bytes of r to w in large chunks, with a progress
// bar on a terminal.
func copyVolume(ctx context.Context, a *app, w io.Writer, r io.ReaderAt, size int64) error {
	bar := progress.New(a.stderr, "Exporting", size, a.showProgress())
	buf := make([]byte, 4<<20)
	for off := int64(0); off < size; {
		if ctx.Err() != nil {
			bar.Finish()
			return &copyInterrupted{done: off, total: size}
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

// writeAtomically writes path through a temporary file beside it (see
// internal/atomicfile), renamed over path only when fill succeeds: a
// failure, an interrupt or a kill never leaves a partial or decrypted file
// behind (a killed run's file is removed by the next one). A new file is
// readable by its owner only; a replaced one keeps its mode.
func writeAtomically(a *app, path string, fill func(w io.Writer) error) error {
	return atomicfile.Write(path, atomicfile.Options{KeepMode: true, Leftover: a.leftover}, fill)
}

// leftover reports what a sweep for leftovers of killed runs found.
func (a *app) leftover(l atomicfile.Leftover) { a.warnf("%s", l) }
