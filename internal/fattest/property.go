package fattest

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The property test runs thousands of random operations against a
// filesystem and against a model (a map of paths to contents), checking
// after every few steps that every file reads back exactly and every
// directory lists exactly its children; the package's own Verify adds
// its checks (Check finds nothing, the free space adds up).

// File is what the property run does with an open file.
type File interface {
	WriteAt(p []byte, off int64) (int, error)
	ReadAt(p []byte, off int64) (int, error)
	Truncate(size int64) error
	Close() error
}

// FS is the path API of fat.FS and exfat.FS as the run uses it; F is the
// package's *File and I its *FileInfo.
type FS[F File, I iofs.FileInfo] interface {
	OpenFile(name string, flag int, perm iofs.FileMode) (F, error)
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]iofs.DirEntry, error)
	Stat(name string) (I, error)
	Mkdir(name string) error
	Remove(name string) error
	RemoveAll(name string) error
	Rename(oldName, newName string) error
	Close() error
}

// MFile is a file of the model.
type MFile struct{ Data []byte }

// Model is what the filesystem should hold.
type Model struct {
	Files map[string]*MFile // path -> file
	Dirs  map[string]bool   // directories, "/" included
}

type handle[F File] struct {
	f  F
	mf *MFile
}

// Property is one random run.
type Property[S FS[F, I], F File, I iofs.FileInfo] struct {
	FS      S
	Rand    *rand.Rand
	Steps   int
	MaxSize int // the largest whole file written
	Names   []string
	// Fold is the filesystem's case folding: two names that fold alike
	// are one name.
	Fold              func(string) string
	NoSpace, NotEmpty error // the package's ErrNoSpace and ErrNotEmpty
	// CreateOpen also creates files through handles kept open.
	CreateOpen bool
	// Verify checks fsys against m: VerifyTree, and the package's own
	// checks (Check, free space).
	Verify func(t *testing.T, fsys S, m *Model, when string)
}

// RunReopened runs the steps, closes the filesystem and verifies that
// reopen (a fresh Open of the same device) sees the same tree, since what
// reached the disk is all a later reader gets. It returns the model for
// the package's own final checks (fsck, a second reader).
func (c *Property[S, F, I]) RunReopened(t *testing.T, reopen func() S) *Model {
	t.Helper()
	m, noSpace := c.Run(t)
	if err := c.FS.Close(); err != nil {
		t.Fatal(err)
	}
	c.Verify(t, reopen(), m, "after reopening")
	t.Logf("%d files, %d directories at the end; %d operations hit a full volume", len(m.Files), len(m.Dirs), noSpace)
	return m
}

// Run runs the steps, closes the handles and returns the model (with the
// count of operations that hit a full volume) for the package's final
// checks (reopen, fsck, a second reader).
func (c *Property[S, F, I]) Run(t *testing.T) (m *Model, noSpace int) {
	t.Helper()
	r := c.Rand
	steps, maxSize := c.Steps, c.MaxSize
	m = &Model{Files: map[string]*MFile{}, Dirs: map[string]bool{"/": true}}
	var handles []handle[F]
	noSpace = 0
	for step := 0; step < steps; step++ {
		op := r.IntN(100)
		desc := ""
		var err error
		switch {
		case op < 18: // create or replace a whole file
			p := path.Join(m.randomDir(r), c.randomName(r))
			if old, ok := c.exists(m, p); ok {
				if m.Dirs[old] {
					continue
				}
				p = old
			}
			data := Pattern(step, r.IntN(maxSize))
			desc = fmt.Sprintf("write %s (%d bytes)", p, len(data))
			err = c.FS.WriteFile(p, data, 0o644)
			switch {
			case err == nil:
				setFile(m, p, data)
			case errors.Is(err, c.NoSpace):
				// The file exists, truncated, unless there was no room for
				// its entry at all.
				if _, serr := c.FS.Stat(p); serr == nil {
					setFile(m, p, nil)
				}
			}
		case op < 32: // write at a random offset
			p := m.randomFile(r)
			if p == "" {
				continue
			}
			mf := m.Files[p]
			off := r.IntN(len(mf.Data) + 3000)
			data := Pattern(step, r.IntN(maxSize/4+1))
			desc = fmt.Sprintf("writeat %s %d+%d", p, off, len(data))
			var f F
			f, err = c.FS.OpenFile(p, os.O_RDWR, 0)
			if err == nil {
				_, err = f.WriteAt(data, int64(off))
				if err == nil {
					writeModel(mf, data, off)
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		case op < 40: // truncate
			p := m.randomFile(r)
			if p == "" {
				continue
			}
			mf := m.Files[p]
			n := r.IntN(len(mf.Data) + 5000)
			if r.IntN(4) == 0 {
				n = 0
			}
			desc = fmt.Sprintf("truncate %s %d", p, n)
			var f F
			f, err = c.FS.OpenFile(p, os.O_RDWR, 0)
			if err == nil {
				err = f.Truncate(int64(n))
				if err == nil {
					resize(mf, n)
				}
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
		case op < 50: // remove a file
			p := m.randomFile(r)
			if p == "" {
				continue
			}
			desc = "remove " + p
			if err = c.FS.Remove(p); err == nil {
				delete(m.Files, p)
			}
		case op < 60: // rename a file, sometimes over another
			p := m.randomFile(r)
			if p == "" {
				continue
			}
			q := path.Join(m.randomDir(r), c.randomName(r))
			if r.IntN(3) == 0 {
				if o := m.randomFile(r); o != "" {
					q = o
				}
			}
			if old, ok := c.exists(m, q); ok {
				if m.Dirs[old] {
					continue
				}
				if old != p {
					q = old
				} else if strings.EqualFold(q, p) {
					// a change of case only
				}
			}
			desc = fmt.Sprintf("rename %s -> %s", p, q)
			if err = c.FS.Rename(p, q); err == nil {
				mf := m.Files[p]
				delete(m.Files, p)
				if old, ok := c.exists(m, q); ok {
					delete(m.Files, old)
				}
				m.Files[q] = mf
			}
		case op < 68: // mkdir
			p := path.Join(m.randomDir(r), c.randomName(r))
			if _, ok := c.exists(m, p); ok || strings.Count(p, "/") > 4 {
				continue
			}
			desc = "mkdir " + p
			if err = c.FS.Mkdir(p); err == nil {
				m.Dirs[p] = true
			}
		case op < 73: // remove a directory (empty or not)
			p := m.randomDir(r)
			if p == "/" {
				continue
			}
			if len(m.children(p)) == 0 || r.IntN(4) == 0 {
				desc = "removeall " + p
				if err = c.FS.RemoveAll(p); err == nil {
					for f := range m.Files {
						if strings.HasPrefix(f, p+"/") {
							delete(m.Files, f)
						}
					}
					for d := range m.Dirs {
						if d == p || strings.HasPrefix(d, p+"/") {
							delete(m.Dirs, d)
						}
					}
				}
			} else {
				desc = "remove non-empty " + p
				if err = c.FS.Remove(p); !errors.Is(err, c.NotEmpty) {
					t.Fatalf("step %d: %s: %v, want ErrNotEmpty", step, desc, err)
				}
				err = nil
			}
		case op < 78: // rename a directory
			p := m.randomDir(r)
			q := path.Join(m.randomDir(r), c.randomName(r))
			if p == "/" || q == p || strings.HasPrefix(q, p+"/") {
				continue
			}
			if _, ok := c.exists(m, q); ok {
				continue
			}
			desc = fmt.Sprintf("rename dir %s -> %s", p, q)
			if err = c.FS.Rename(p, q); err == nil {
				moveTree(m, p, q)
			}
		case op < 86: // open a long-lived handle (or, with CreateOpen, create a file through one)
			p := m.randomFile(r)
			if c.CreateOpen && r.IntN(3) == 0 && len(handles) < 4 {
				q := path.Join(m.randomDir(r), c.randomName(r))
				if _, ok := c.exists(m, q); ok {
					continue
				}
				desc = "create and keep open " + q
				var f F
				if f, err = c.FS.OpenFile(q, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
					setFile(m, q, nil)
					handles = append(handles, handle[F]{f, m.Files[q]})
				}
				break
			}
			if p == "" || len(handles) >= 4 {
				continue
			}
			desc = "open " + p
			var f F
			if f, err = c.FS.OpenFile(p, os.O_RDWR, 0); err == nil {
				handles = append(handles, handle[F]{f, m.Files[p]})
			}
		case op < 96: // write or truncate through a handle (its file may be renamed or removed)
			if len(handles) == 0 {
				continue
			}
			h := handles[r.IntN(len(handles))]
			if r.IntN(4) == 0 {
				n := r.IntN(len(h.mf.Data) + 2000)
				desc = fmt.Sprintf("handle truncate %d", n)
				if err = h.f.Truncate(int64(n)); err == nil {
					resize(h.mf, n)
				}
			} else {
				off := r.IntN(len(h.mf.Data) + 2000)
				data := Pattern(step, r.IntN(maxSize/4+1))
				desc = fmt.Sprintf("handle writeat %d+%d", off, len(data))
				if _, err = h.f.WriteAt(data, int64(off)); err == nil {
					writeModel(h.mf, data, off)
				}
			}
			if err == nil {
				got := make([]byte, len(h.mf.Data))
				if n, rerr := h.f.ReadAt(got, 0); (rerr != nil && len(got) > 0) || n != len(got) || !bytes.Equal(got, h.mf.Data) {
					t.Fatalf("step %d: %s: handle reads back wrong data (n=%d err=%v)", step, desc, n, rerr)
				}
			}
		default: // close a handle
			if len(handles) == 0 {
				continue
			}
			i := r.IntN(len(handles))
			desc = "close handle"
			err = handles[i].f.Close()
			handles = append(handles[:i], handles[i+1:]...)
		}
		if errors.Is(err, c.NoSpace) {
			noSpace++
			err = nil
		}
		if err != nil {
			t.Fatalf("step %d: %s: %v", step, desc, err)
		}
		if step%50 == 49 || step == steps-1 {
			c.Verify(t, c.FS, m, fmt.Sprintf("after step %d (%s)", step, desc))
		}
	}
	for _, h := range handles {
		if err := h.f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c.Verify(t, c.FS, m, "at the end")
	return m, noSpace
}

// VerifyTree fails t unless every file of m reads back exactly and every
// directory lists exactly its children, sorted.
func VerifyTree[F File, I iofs.FileInfo](t *testing.T, fsys FS[F, I], m *Model, when string) {
	t.Helper()
	for p, mf := range m.Files {
		got, err := fsys.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: read %s: %v", when, p, err)
		}
		if !bytes.Equal(got, mf.Data) {
			t.Fatalf("%s: %s has %d bytes, model %d (or content differs)", when, p, len(got), len(mf.Data))
		}
	}
	for d := range m.Dirs {
		ents, err := fsys.ReadDir(d)
		if err != nil {
			t.Fatalf("%s: readdir %s: %v", when, d, err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if want := m.children(d); strings.Join(names, "|") != strings.Join(want, "|") {
			t.Fatalf("%s: %s lists\n%q\nwant\n%q", when, d, names, want)
		}
	}
}

// Contents returns the model's files and its directories other than the
// root, as a second reader is checked against.
func (m *Model) Contents() (files map[string][]byte, dirs []string) {
	files = map[string][]byte{}
	for p, mf := range m.Files {
		files[p] = mf.Data
	}
	for d := range m.Dirs {
		if d != "/" {
			dirs = append(dirs, d)
		}
	}
	return files, dirs
}

func (m *Model) children(dir string) []string {
	var out []string
	for p := range m.Files {
		if path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	for p := range m.Dirs {
		if p != "/" && path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	sort.Strings(out)
	return out
}

func (m *Model) randomDir(r *rand.Rand) string {
	ds := make([]string, 0, len(m.Dirs))
	for d := range m.Dirs {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	return ds[r.IntN(len(ds))]
}

func (m *Model) randomFile(r *rand.Rand) string {
	if len(m.Files) == 0 {
		return ""
	}
	fs := make([]string, 0, len(m.Files))
	for p := range m.Files {
		fs = append(fs, p)
	}
	sort.Strings(fs)
	return fs[r.IntN(len(fs))]
}

// exists reports whether any name in p's directory is p's name under the
// filesystem's case folding, and which.
func (c *Property[S, F, I]) exists(m *Model, p string) (string, bool) {
	dir, base := path.Dir(p), c.Fold(path.Base(p))
	for _, n := range m.children(dir) {
		if c.Fold(n) == base {
			return path.Join(dir, n), true
		}
	}
	return "", false
}

func (c *Property[S, F, I]) randomName(r *rand.Rand) string {
	n := c.Names[r.IntN(len(c.Names))]
	if r.IntN(3) > 0 {
		n += strconv.Itoa(r.IntN(40))
	}
	return n
}

func setFile(m *Model, p string, data []byte) {
	if mf, ok := m.Files[p]; ok {
		mf.Data = append(mf.Data[:0:0], data...)
		return
	}
	m.Files[p] = &MFile{Data: append([]byte(nil), data...)}
}

func writeModel(mf *MFile, data []byte, off int) {
	if end := off + len(data); end > len(mf.Data) {
		resize(mf, end)
	}
	copy(mf.Data[off:], data)
}

func resize(mf *MFile, n int) {
	if n <= len(mf.Data) {
		mf.Data = mf.Data[:n]
		return
	}
	mf.Data = append(mf.Data, make([]byte, n-len(mf.Data))...)
}

func moveTree(m *Model, from, to string) {
	for f, mf := range m.Files {
		if strings.HasPrefix(f, from+"/") {
			delete(m.Files, f)
			m.Files[to+f[len(from):]] = mf
		}
	}
	for d := range m.Dirs {
		if d == from || strings.HasPrefix(d, from+"/") {
			delete(m.Dirs, d)
			m.Dirs[to+d[len(from):]] = true
		}
	}
}

// Pattern returns n deterministic bytes that differ per seed.
func Pattern(seed, n int) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// Usage is what a package's Check and Statfs say of the clusters.
type Usage struct {
	ClusterSize             int
	File, Dir, System, Open uint32 // Check's counts (System: exFAT's bitmap and up-case table)
	Free, Total             uint32 // Statfs's
	MinDirs                 uint32 // the directory clusters m's directories need at least
}

// VerifyUsage fails t unless Check found nothing (report is what it
// found), the files hold exactly the clusters their sizes need,
// the directories at least MinDirs, and Statfs's free clusters are the
// total minus all that.
func VerifyUsage(t *testing.T, m *Model, when string, clean bool, report fmt.Stringer, u Usage) {
	t.Helper()
	if !clean {
		t.Fatalf("%s: Check found:\n%s", when, report)
	}
	cs := uint32(u.ClusterSize)
	var need uint32
	for _, mf := range m.Files {
		need += (uint32(len(mf.Data)) + cs - 1) / cs
	}
	if u.File != need {
		t.Fatalf("%s: files hold %d clusters, their sizes need %d", when, u.File, need)
	}
	if u.Dir < u.MinDirs {
		t.Fatalf("%s: %d directory clusters for %d directories", when, u.Dir, u.MinDirs)
	}
	if used := u.File + u.Dir + u.System + u.Open; u.Free != u.Total-used {
		t.Fatalf("%s: Statfs says %d free clusters; total %d - files %d - dirs %d - system %d - open removed files %d = %d", when,
			u.Free, u.Total, u.File, u.Dir, u.System, u.Open, u.Total-used)
	}
}

// PropertySteps is how many steps a property run takes: def, 500 with
// -short, or what the environment variable steps (if set) says; seed is
// 1 or what the variable seedVar says, to repeat a failing run.
func PropertySteps(def int, stepsVar, seedVar string) (steps int, seed uint64) {
	steps, seed = def, 1
	if testing.Short() {
		steps = 500
	}
	if s := os.Getenv(stepsVar); s != "" {
		steps, _ = strconv.Atoi(s)
	}
	if s := os.Getenv(seedVar); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	return steps, seed
}
