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
	"github.com/cryptvol/cryptvol/volume"
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
		err := copyVolume(ctx, a, a.stdout, v)
		var ie *volume.ExportInterrupted
		if errors.As(err, &ie) {
			return interrupted("%s of %s written to standard output", humanSize(ie.Done), humanSize(ie.Total))
		}
		return err
	}
	err = writeAtomically(a, out, func(w io.Writer) error {
		return copyVolume(ctx, a, w, v)
	})
	var ie *volume.ExportInterrupted
	if errors.As(err, &ie) {
		return interrupted("%s of %s exported; %s not written (its temporary file was removed)", humanSize(ie.Done), humanSize(ie.Total), out)
	}
	return err
}

// copyVolume writes v's data area to w, with a progress bar on a
// terminal (finished unless an error other than an interrupt stops it).
func copyVolume(ctx context.Context, a *app, w io.Writer, v *volume.Volume) error {
	bar := progress.New(a.stderr, "Exporting", v.Size(), a.showProgress())
	err := v.Export(ctx, w, bar.Set)
	var ie *volume.ExportInterrupted
	if err == nil || errors.As(err, &ie) {
		bar.Finish()
	}
	return err
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
