package archive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/internal/ctxio"
)

// Extracting members into a directory, as tar does, keeping nothing that
// did not authenticate.

// ExtractOptions say how ExtractAll writes.
type ExtractOptions struct {
	// Replace overwrites existing files; without it one is an
	// *ExtractError wrapping ErrExists, before anything is written.
	Replace bool
	// Damaged hears of a file member that does not authenticate (err
	// wraps ErrDamaged): nothing of it is kept, and the others are
	// extracted.
	Damaged func(e Entry, err error)
}

// ExtractReport counts what ExtractAll did with the file members.
type ExtractReport struct {
	Files     int      // file members selected
	Extracted int      // of which written
	Damaged   []string // of which not written: they do not authenticate
}

// ExtractError is a member ExtractAll refused or was interrupted in: Err
// is ErrInvalidName (its name would leave the directory), ErrExists (Path
// is there) or ctx's error. Entry is nil when ctx stopped it between two
// members.
type ExtractError struct {
	Entry *Entry
	Path  string // where the member goes: below the directory
	Err   error
}

func (e *ExtractError) Error() string {
	if e.Entry == nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("%s: %v", e.Entry.Name, e.Err)
}

func (e *ExtractError) Unwrap() error { return e.Err }

// ExtractAll writes the members sel below dir (created if missing),
// recreating their paths. Every destination is checked before anything
// is written; then each file goes through Extract, and directories get
// their modes and times last, deepest first, once their contents are in.
// A member that does not authenticate is skipped (o.Damaged) and counted.
func (a *Archive) ExtractAll(ctx context.Context, dir string, sel []Entry, o *ExtractOptions) (ExtractReport, error) {
	if o == nil {
		o = &ExtractOptions{}
	}
	var rep ExtractReport
	for i, e := range sel {
		local := filepath.FromSlash(e.Name)
		if !filepath.IsLocal(local) {
			return rep, &ExtractError{Entry: &sel[i], Path: filepath.Join(dir, local), Err: ErrInvalidName}
		}
		if e.IsDir() {
			continue
		}
		rep.Files++
		if _, err := os.Lstat(filepath.Join(dir, local)); err == nil && !o.Replace {
			return rep, &ExtractError{Entry: &sel[i], Path: filepath.Join(dir, local), Err: ErrExists}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rep, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return rep, err
	}
	defer root.Close()
	var dirs []Entry
	for i, e := range sel {
		if err := ctx.Err(); err != nil {
			return rep, &ExtractError{Err: err}
		}
		if e.IsDir() {
			if err := root.MkdirAll(filepath.FromSlash(e.Name), 0o700); err != nil {
				return rep, err
			}
			dirs = append(dirs, e)
			continue
		}
		err := a.Extract(ctx, root, e)
		switch {
		case errors.Is(err, ErrDamaged):
			if o.Damaged != nil {
				o.Damaged(e, err)
			}
			rep.Damaged = append(rep.Damaged, e.Name)
			continue
		case errors.Is(err, context.Canceled):
			return rep, &ExtractError{Entry: &sel[i], Path: filepath.Join(dir, filepath.FromSlash(e.Name)), Err: err}
		case err != nil:
			return rep, err
		}
		rep.Extracted++
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].Name > dirs[j].Name })
	for _, e := range dirs {
		local := filepath.FromSlash(e.Name)
		root.Chmod(local, e.Mode.Perm())
		root.Chtimes(local, e.ModTime, e.ModTime)
	}
	return rep, nil
}

// Extract writes the file member e below root, at its name (creating the
// directories on the way), with its mode and modification time. It goes
// through a temporary file beside it (see internal/atomicfile), renamed
// into place once every chunk has authenticated: a damaged member, an
// interrupt (ctx) or a kill leaves nothing of it behind (a killed run's
// file is removed by the next one, and reported to OpenOptions.Warn). As
// tar, it does not fsync: the archive still holds what a crash would
// lose. A name that would leave root is refused (ErrInvalidName).
func (a *Archive) Extract(ctx context.Context, root *os.Root, e Entry) error {
	local := filepath.FromSlash(e.Name)
	if !filepath.IsLocal(local) {
		return fmt.Errorf("%w: %q would be extracted outside %s", ErrInvalidName, e.Name, root.Name())
	}
	if d := filepath.Dir(local); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	m, err := a.Open(e.Name)
	if err != nil {
		return err
	}
	defer m.Close()
	f, err := atomicfile.CreateIn(root, filepath.ToSlash(local), atomicfile.Options{Perm: e.Mode.Perm(), Leftover: a.leftover, NoSync: true})
	if err != nil {
		return err
	}
	defer f.Discard()
	if _, err := ctxio.Copy(ctx, f.File, m); err != nil {
		return err
	}
	if err := root.Chtimes(f.TempName(), e.ModTime, e.ModTime); err != nil {
		return err
	}
	return f.Commit()
}
