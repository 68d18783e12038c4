package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

func init() {
	register(&command{
		name:    "get",
		summary: "copy files or directories out of a volume",
		usage: `Usage: cryptvol get VOLUME PATH [DEST|-] [-r] [--force] [credentials]

Copies the file PATH from the FAT filesystem inside VOLUME to DEST (default:
its name in the current directory), or to standard output with -. A
directory needs -r and is copied with everything in it. Existing local files
are kept unless --force; each file is written to a temporary name and
renamed when complete, with its modification time.

Example:
  cryptvol get secret.hc /notes.txt - --password-file pw.txt
  cryptvol get secret.hc /photos ./photos -r --password-file pw.txt
`,
		run: runGet,
	})
}

func runGet(ctx context.Context, a *app, args []string) error {
	c := commands["get"]
	fl := newFlags(c, a)
	cf := addCredFlags(fl)
	recursive := fl.BoolP("recursive", "r", false, "copy directories recursively")
	force := fl.Bool("force", false, "overwrite existing local files")
	if err := parseFlags(fl, c, a, args); err != nil {
		return err
	}
	if err := wantArgs(fl, 2, 3); err != nil {
		return err
	}
	src := volPath(fl.Arg(1))
	dest := path.Base(src)
	if fl.NArg() == 3 {
		dest = fl.Arg(2)
	}
	ffs, done, err := openFAT(ctx, a, fl, cf, fl.Arg(0), false)
	if err != nil {
		return err
	}
	defer done()
	st, err := ffs.Stat(src)
	if err != nil {
		return fatError(err)
	}
	if dest == "-" {
		if st.IsDir() {
			return usageError(fmt.Errorf("%s is a directory: cannot write it to standard output", src))
		}
		if err := copyOut(ctx, ffs, src, a.stdout); errors.Is(err, context.Canceled) {
			return interrupted("%s partly written to standard output", src)
		} else if err != nil {
			return err
		}
		return nil
	}
	var jobs []getJob
	if st.IsDir() {
		if !*recursive {
			return usageError(fmt.Errorf("%s is a directory (use -r)", src))
		}
		if jobs, err = planGetTree(ctx, ffs, src, dest); err != nil {
			return err
		}
	} else {
		if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
			dest = filepath.Join(dest, path.Base(src))
		}
		jobs = []getJob{{src: src, dest: dest, info: st}}
	}
	// Every destination is checked before anything is written.
	if !*force {
		for _, j := range jobs {
			if j.info == nil {
				continue
			}
			if _, err := os.Lstat(j.dest); err == nil {
				return withCode(exitDestroy, fmt.Errorf("%s exists (use --force to overwrite)", j.dest))
			}
		}
	}
	return getAll(ctx, a, ffs, jobs)
}

// getJob is one file (or, with info nil, one directory) to copy out.
type getJob struct {
	src, dest string
	info      *fat.FileInfo
}

// planGetTree lists the directory src of the volume and everything under
// it as jobs writing below dest, directories before their contents.
func planGetTree(ctx context.Context, ffs *fat.FS, src, dest string) ([]getJob, error) {
	jobs := []getJob{{src: src, dest: dest}}
	ents, err := ffs.ReadDir(src)
	if err != nil {
		return nil, fatError(err)
	}
	for _, e := range ents {
		if ctx.Err() != nil {
			return nil, interrupted("nothing copied yet")
		}
		s := path.Join(src, e.Name())
		d := filepath.Join(dest, localName(e.Name()))
		if e.IsDir() {
			sub, err := planGetTree(ctx, ffs, s, d)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, sub...)
			continue
		}
		fi, err := ffs.Stat(s)
		if err != nil {
			return nil, fatError(err)
		}
		jobs = append(jobs, getJob{src: s, dest: d, info: fi})
	}
	return jobs, nil
}

// getAll copies the jobs out, each file through a temporary file renamed
// when complete; an interrupt stops it between or inside files, removes
// the partial one and says how far it got.
func getAll(ctx context.Context, a *app, ffs *fat.FS, jobs []getJob) error {
	files, copied := 0, 0
	for _, j := range jobs {
		if j.info != nil {
			files++
		}
	}
	dirs := map[string]bool{}
	defer func() {
		for d := range dirs {
			atomicfile.SyncDir(d)
		}
	}()
	for _, j := range jobs {
		if ctx.Err() != nil {
			return interrupted("%d of %d files copied", copied, files)
		}
		if j.info == nil {
			if err := os.MkdirAll(j.dest, 0o755); err != nil {
				return err
			}
			continue
		}
		// Each file's data is synced before its rename; the directories
		// are synced once at the end.
		err := atomicfile.Write(j.dest, atomicfile.Options{KeepMode: true, NoDirSync: true, Leftover: a.leftover}, func(w io.Writer) error {
			return copyOut(ctx, ffs, j.src, w)
		})
		dirs[filepath.Dir(j.dest)] = true
		if errors.Is(err, context.Canceled) {
			return interrupted("%d of %d files copied; %s partial, removed", copied, files, j.src)
		}
		if err != nil {
			return err
		}
		if err := os.Chtimes(j.dest, j.info.ModTime(), j.info.ModTime()); err != nil {
			return err
		}
		copied++
	}
	return nil
}

func copyOut(ctx context.Context, ffs *fat.FS, src string, w io.Writer) error {
	f, err := ffs.Open(src)
	if err != nil {
		return fatError(err)
	}
	defer f.Close()
	_, err = copyCtx(ctx, w, f)
	return fatError(err)
}

// localName refuses names that would escape the destination directory.
func localName(n string) string {
	if n == ".." || n == "." || filepath.Base(n) != n {
		return "_" + filepath.Base(n)
	}
	return n
}
