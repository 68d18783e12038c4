package archivebench

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/cryptvol/cryptvol/archive"
)

// mtime is the modification time given to every file.
var mtime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// plainStore keeps each file as a file of its own.
type plainStore struct {
	dir   string
	names []string
}

func (p *plainStore) name() string { return "files" }

func (p *plainStore) build(ctx context.Context, c corpus, n int) error {
	var buf []byte
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf = c.data(i, buf)
		if err := p.write(c.name(i), buf, false); err != nil {
			return err
		}
	}
	return syncDirs(p.dir)
}

// write creates one file; durable also syncs it and its directory, as an
// add that must survive a crash does.
func (p *plainStore) write(name string, data []byte, durable bool) error {
	path := filepath.Join(p.dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	// Synced in any case: only clean pages can be dropped from the cache.
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	p.names = append(p.names, path)
	if durable {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

func (p *plainStore) addOne(c corpus, i int) error {
	return p.write(c.name(i), c.data(i, nil), true)
}

// readAll opens and reads each file into one reused buffer.
func (p *plainStore) readAll() (int64, error) {
	var n int64
	var buf []byte
	for _, path := range p.names {
		f, err := os.Open(path)
		if err != nil {
			return n, err
		}
		fi, err := f.Stat()
		if err == nil {
			buf = slices.Grow(buf[:0], int(fi.Size()))[:fi.Size()]
			_, err = io.ReadFull(f, buf)
		}
		f.Close()
		if err != nil {
			return n, err
		}
		n += int64(len(buf))
	}
	return n, nil
}

// files lists the files and their directories (which take blocks too).
func (p *plainStore) files() ([]string, error) {
	var out []string
	err := filepath.WalkDir(p.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil {
			out = append(out, path)
		}
		return err
	})
	return out, err
}

func (p *plainStore) close() error { return nil }

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // no directory sync there; see archive.syncDir
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	d.Sync() // not every system syncs directories; best effort
	return nil
}

func syncDirs(root string) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			return syncDir(path)
		}
		return err
	})
}

// zipStore keeps the files in a zip archive (archive/zip), deflated (what
// zip tools do by default) or stored.
type zipStore struct {
	path   string
	label  string
	method uint16
}

const (
	zipDeflate = zip.Deflate
	zipStored  = zip.Store
)

func (z *zipStore) name() string { return z.label }

func (z *zipStore) build(ctx context.Context, c corpus, n int) error {
	return z.rewrite(c, nil, n, -1)
}

// rewrite writes a new zip holding the old one's entries (copied raw, not
// recompressed), files first..n-1 and file extra if >= 0, then syncs and
// renames it into place: the only way to add to a zip without risking the
// whole archive on a crash.
func (z *zipStore) rewrite(c corpus, old *zip.ReadCloser, n, extra int) error {
	tmp, err := os.CreateTemp(filepath.Dir(z.path), ".zip-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	w := zip.NewWriter(tmp)
	if old != nil {
		for _, f := range old.File {
			if err := w.Copy(f); err != nil {
				return err
			}
		}
	}
	var buf []byte
	add := func(i int) error {
		buf = c.data(i, buf)
		fw, err := w.CreateHeader(&zip.FileHeader{Name: c.name(i), Method: z.method, Modified: mtime})
		if err != nil {
			return err
		}
		_, err = fw.Write(buf)
		return err
	}
	for i := 0; i < n; i++ {
		if err := add(i); err != nil {
			return err
		}
	}
	if extra >= 0 {
		if err := add(extra); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if old != nil {
		// Windows renames over no open file.
		old.Close()
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), z.path); err != nil {
		return err
	}
	return syncDir(filepath.Dir(z.path))
}

func (z *zipStore) addOne(c corpus, i int) error {
	old, err := zip.OpenReader(z.path)
	if err != nil {
		return err
	}
	defer old.Close()
	return z.rewrite(c, old, 0, i)
}

// readAll opens the zip (reading its central directory), then reads each
// file, in the zip's order, into one reused buffer.
func (z *zipStore) readAll() (int64, error) {
	r, err := zip.OpenReader(z.path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n int64
	var buf []byte
	for _, f := range r.File {
		rc, err := f.Open()
		if err != nil {
			return n, err
		}
		buf = slices.Grow(buf[:0], int(f.UncompressedSize64))[:f.UncompressedSize64]
		_, err = io.ReadFull(rc, buf)
		rc.Close()
		if err != nil {
			return n, fmt.Errorf("%s: %w", f.Name, err)
		}
		n += int64(len(buf))
	}
	return n, nil
}

func (z *zipStore) files() ([]string, error) { return []string{z.path}, nil }
func (z *zipStore) close() error             { return nil }

// archiveStore keeps the files in an encrypted archive, unlocked with a key
// file so that the figures measure the format, not Argon2id (which a
// password adds once per open: see `cryptvol benchmark kdf`).
type archiveStore struct {
	path string
	cred archive.Credentials
	// oneByOne reads with ReadFile per member (one read each) instead of
	// Walk (sequential 1 MiB reads, one buffer, decryption shared out over
	// threads cores, 0 meaning all).
	oneByOne bool
	threads  int
}

func newArchiveStore(path string) *archiveStore {
	return &archiveStore{path: path, cred: archive.Credentials{KeyFile: []byte("benchmark key file, not secret..")}}
}

func (s *archiveStore) name() string {
	switch {
	case s.oneByOne:
		return "archive-1by1"
	case s.threads == 1:
		return "archive-1core"
	}
	return "archive"
}

func (s *archiveStore) open(readOnly bool) (*archive.Archive, error) {
	return archive.Open(context.Background(), s.path, s.cred, &archive.OpenOptions{ReadOnly: readOnly, Threads: s.threads})
}

func (s *archiveStore) build(ctx context.Context, c corpus, n int) error {
	a, err := archive.Create(ctx, s.path, s.cred, nil)
	if err != nil {
		return err
	}
	defer a.Close()
	var buf []byte
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf = c.data(i, buf)
		if err := a.Add(c.name(i), bytes.NewReader(buf), archive.Info{ModTime: mtime, Mode: 0o644}, nil); err != nil {
			return err
		}
	}
	return a.Commit()
}

// appendOpen adds one file to an open archive and commits it (durably).
func appendOpen(a *archive.Archive, name string, data []byte) error {
	if err := a.Add(name, bytes.NewReader(data), archive.Info{ModTime: mtime, Mode: 0o644}, nil); err != nil {
		return err
	}
	return a.Commit()
}

// addOne is what `cryptvol archive add` does (without the key derivation):
// open, add, commit, close.
func (s *archiveStore) addOne(c corpus, i int) error {
	a, err := s.open(false)
	if err != nil {
		return err
	}
	defer a.Close()
	return appendOpen(a, c.name(i), c.data(i, nil))
}

// readAll opens the archive (reading its index) and reads every member,
// with Walk or one ReadFile each.
func (s *archiveStore) readAll() (int64, error) {
	a, err := s.open(true)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	var n int64
	if !s.oneByOne {
		err := a.Walk(func(e archive.Entry, data []byte) error {
			n += int64(len(data))
			return nil
		})
		return n, err
	}
	for _, e := range a.List() {
		b, err := a.ReadFile(e.Name)
		if err != nil {
			return n, err
		}
		n += int64(len(b))
	}
	return n, nil
}

func (s *archiveStore) files() ([]string, error) { return []string{s.path}, nil }
func (s *archiveStore) close() error             { return nil }
