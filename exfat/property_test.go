package exfat

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// The property test runs thousands of random operations against the
// filesystem and against a model (a map of paths to contents), checking
// after every few steps that every file reads back exactly, every
// directory lists exactly its children, Check finds nothing, and the free
// space is the total minus what the files' sizes need minus what the
// directories hold. At the end fsck.fat -n must accept the image.

type mfile struct{ data []byte }

type model struct {
	files map[string]*mfile // path -> file
	dirs  map[string]bool   // directories, "/" included
}

type handle struct {
	f  *File
	mf *mfile
}

func (m *model) children(dir string) []string {
	var out []string
	for p := range m.files {
		if path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	for p := range m.dirs {
		if p != "/" && path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	sort.Strings(out)
	return out
}

func (m *model) randomDir(r *rand.Rand) string {
	ds := make([]string, 0, len(m.dirs))
	for d := range m.dirs {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	return ds[r.IntN(len(ds))]
}

func (m *model) randomFile(r *rand.Rand) string {
	if len(m.files) == 0 {
		return ""
	}
	fs := make([]string, 0, len(m.files))
	for p := range m.files {
		fs = append(fs, p)
	}
	sort.Strings(fs)
	return fs[r.IntN(len(fs))]
}

var modelUpcase = expandUpcase(defaultUpcase)

func foldName(s string) string { return modelUpcase.key(utf16.Encode([]rune(s))) }

// exists reports whether any name in dir equals name ignoring case (as the
// up-case table has it).
func (m *model) exists(p string) (string, bool) {
	dir, base := path.Dir(p), foldName(path.Base(p))
	for _, c := range m.children(dir) {
		if foldName(c) == base {
			return path.Join(dir, c), true
		}
	}
	return "", false
}

var propNames = []string{"a", "File.TXT", "long name number", "Привет", "привет", "日本", "😀x", "x.y.z", "UPPER", "lower.txt", "MiXeD.Md", "n",
	strings.Repeat("a name of two hundred and twenty units ", 6)[:220]}

func randomName(r *rand.Rand) string {
	n := propNames[r.IntN(len(propNames))]
	if r.IntN(3) > 0 {
		n += strconv.Itoa(r.IntN(40))
	}
	return n
}

// TestPropertyRandomOps runs 2,000 random operations on each of two
// volumes (500 with -short); EXFAT_PROPERTY_STEPS sets another number for
// a long run (say 100000), EXFAT_PROPERTY_SEED another seed.
func TestPropertyRandomOps(t *testing.T) {
	steps := 2000
	if testing.Short() {
		steps = 500
	}
	if s := os.Getenv("EXFAT_PROPERTY_STEPS"); s != "" {
		steps, _ = strconv.Atoi(s)
	}
	seed := uint64(1)
	if s := os.Getenv("EXFAT_PROPERTY_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	for _, c := range []struct {
		size    int64
		cluster int
	}{{2 << 20, 512}, {24 << 20, 4096}} {
		t.Run(fmt.Sprint(c.cluster), func(t *testing.T) {
			t.Logf("seed %d, %d steps (set EXFAT_PROPERTY_SEED, EXFAT_PROPERTY_STEPS for others)", seed, steps)
			propertyRun(t, c.size, c.cluster, steps, seed)
		})
	}
}

func propertyRun(t *testing.T, size int64, cluster, steps int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, uint64(cluster)))
	dev := newMemDev(t, size)
	mustFormat(t, dev, size, FormatOptions{ClusterSize: cluster, Align: 4096})
	fs := mustOpen(t, dev, size)
	m := &model{files: map[string]*mfile{}, dirs: map[string]bool{"/": true}}
	var handles []handle
	noSpace := 0
	maxSize := int(size / 12)

	for step := 0; step < steps; step++ {
		op := r.IntN(100)
		desc := ""
		var err error
		switch {
		case op < 18: // create or replace a whole file
			p := path.Join(m.randomDir(r), randomName(r))
			if old, ok := m.exists(p); ok {
				if m.dirs[old] {
					continue
				}
				p = old
			}
			data := pattern(step, r.IntN(maxSize))
			desc = fmt.Sprintf("write %s (%d bytes)", p, len(data))
			err = fs.WriteFile(p, data, 0o644)
			switch {
			case err == nil:
				setFile(m, p, data)
			case errors.Is(err, ErrNoSpace):
				// The file exists, truncated, unless there was no room for
				// its entry at all.
				if _, serr := fs.Stat(p); serr == nil {
					setFile(m, p, nil)
				}
			}
		case op < 32: // write at a random offset
			p := m.randomFile(r)
			if p == "" {
				continue
			}
			mf := m.files[p]
			off := r.IntN(len(mf.data) + 3000)
			data := pattern(step, r.IntN(maxSize/4+1))
			desc = fmt.Sprintf("writeat %s %d+%d", p, off, len(data))
			var f *File
			f, err = fs.OpenFile(p, os.O_RDWR, 0)
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
			mf := m.files[p]
			n := r.IntN(len(mf.data) + 5000)
			if r.IntN(4) == 0 {
				n = 0
			}
			desc = fmt.Sprintf("truncate %s %d", p, n)
			var f *File
			f, err = fs.OpenFile(p, os.O_RDWR, 0)
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
			if err = fs.Remove(p); err == nil {
				delete(m.files, p)
			}
		case op < 60: // rename a file, sometimes over another
			p := m.randomFile(r)
			if p == "" {
				continue
			}
			q := path.Join(m.randomDir(r), randomName(r))
			if r.IntN(3) == 0 {
				if o := m.randomFile(r); o != "" {
					q = o
				}
			}
			if old, ok := m.exists(q); ok {
				if m.dirs[old] {
					continue
				}
				if old != p {
					q = old
				} else if strings.EqualFold(q, p) {
					// a change of case only
				}
			}
			desc = fmt.Sprintf("rename %s -> %s", p, q)
			if err = fs.Rename(p, q); err == nil {
				mf := m.files[p]
				delete(m.files, p)
				if old, ok := m.exists(q); ok {
					delete(m.files, old)
				}
				m.files[q] = mf
			}
		case op < 68: // mkdir
			p := path.Join(m.randomDir(r), randomName(r))
			if _, ok := m.exists(p); ok || strings.Count(p, "/") > 4 {
				continue
			}
			desc = "mkdir " + p
			if err = fs.Mkdir(p); err == nil {
				m.dirs[p] = true
			}
		case op < 73: // remove a directory (empty or not)
			p := m.randomDir(r)
			if p == "/" {
				continue
			}
			if len(m.children(p)) == 0 || r.IntN(4) == 0 {
				desc = "removeall " + p
				if err = fs.RemoveAll(p); err == nil {
					for f := range m.files {
						if strings.HasPrefix(f, p+"/") {
							delete(m.files, f)
						}
					}
					for d := range m.dirs {
						if d == p || strings.HasPrefix(d, p+"/") {
							delete(m.dirs, d)
						}
					}
				}
			} else {
				desc = "remove non-empty " + p
				if err = fs.Remove(p); !errors.Is(err, ErrNotEmpty) {
					t.Fatalf("step %d: %s: %v, want ErrNotEmpty", step, desc, err)
				}
				err = nil
			}
		case op < 78: // rename a directory
			p := m.randomDir(r)
			q := path.Join(m.randomDir(r), randomName(r))
			if p == "/" || q == p || strings.HasPrefix(q, p+"/") {
				continue
			}
			if _, ok := m.exists(q); ok {
				continue
			}
			desc = fmt.Sprintf("rename dir %s -> %s", p, q)
			if err = fs.Rename(p, q); err == nil {
				moveTree(m, p, q)
			}
		case op < 86: // open a long-lived handle, or create a file through one
			p := m.randomFile(r)
			if r.IntN(3) == 0 && len(handles) < 4 {
				q := path.Join(m.randomDir(r), randomName(r))
				if _, ok := m.exists(q); ok {
					continue
				}
				desc = "create and keep open " + q
				var f *File
				if f, err = fs.OpenFile(q, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644); err == nil {
					setFile(m, q, nil)
					handles = append(handles, handle{f, m.files[q]})
				}
				break
			}
			if p == "" || len(handles) >= 4 {
				continue
			}
			desc = "open " + p
			var f *File
			if f, err = fs.OpenFile(p, os.O_RDWR, 0); err == nil {
				handles = append(handles, handle{f, m.files[p]})
			}
		case op < 96: // write or truncate through a handle (its file may be renamed or removed)
			if len(handles) == 0 {
				continue
			}
			h := handles[r.IntN(len(handles))]
			if r.IntN(4) == 0 {
				n := r.IntN(len(h.mf.data) + 2000)
				desc = fmt.Sprintf("handle truncate %d", n)
				if err = h.f.Truncate(int64(n)); err == nil {
					resize(h.mf, n)
				}
			} else {
				off := r.IntN(len(h.mf.data) + 2000)
				data := pattern(step, r.IntN(maxSize/4+1))
				desc = fmt.Sprintf("handle writeat %d+%d", off, len(data))
				if _, err = h.f.WriteAt(data, int64(off)); err == nil {
					writeModel(h.mf, data, off)
				}
			}
			if err == nil {
				got := make([]byte, len(h.mf.data))
				if n, rerr := h.f.ReadAt(got, 0); (rerr != nil && len(got) > 0) || n != len(got) || !bytes.Equal(got, h.mf.data) {
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
		if errors.Is(err, ErrNoSpace) {
			noSpace++
			err = nil
		}
		if err != nil {
			t.Fatalf("step %d: %s: %v", step, desc, err)
		}
		if step%50 == 49 || step == steps-1 {
			verify(t, fs, m, fmt.Sprintf("after step %d (%s)", step, desc))
		}
	}
	for _, h := range handles {
		if err := h.f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	verify(t, fs, m, "at the end")
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	// A fresh Open sees the same tree.
	verify(t, mustOpen(t, dev, size), m, "after reopening")
	t.Logf("%d files, %d directories at the end; %d operations hit a full volume", len(m.files), len(m.dirs), noSpace)
	needTools(t, "fsck.exfat")
	img := saveImage(t, dev)
	fsckClean(t, img)
	// A second reader: every file's content through exfat-fuse.
	want := map[string][]byte{}
	for p, mf := range m.files {
		want[p] = mf.data
	}
	var dirs []string
	for d := range m.dirs {
		if d != "/" {
			dirs = append(dirs, d)
		}
	}
	checkTree(t, fuseMount(t, img, true), want, dirs)
}

func setFile(m *model, p string, data []byte) {
	if mf, ok := m.files[p]; ok {
		mf.data = append(mf.data[:0:0], data...)
		return
	}
	m.files[p] = &mfile{data: append([]byte(nil), data...)}
}

func writeModel(mf *mfile, data []byte, off int) {
	if end := off + len(data); end > len(mf.data) {
		resize(mf, end)
	}
	copy(mf.data[off:], data)
}

func resize(mf *mfile, n int) {
	if n <= len(mf.data) {
		mf.data = mf.data[:n]
		return
	}
	mf.data = append(mf.data, make([]byte, n-len(mf.data))...)
}

func moveTree(m *model, from, to string) {
	for f, mf := range m.files {
		if strings.HasPrefix(f, from+"/") {
			delete(m.files, f)
			m.files[to+f[len(from):]] = mf
		}
	}
	for d := range m.dirs {
		if d == from || strings.HasPrefix(d, from+"/") {
			delete(m.dirs, d)
			m.dirs[to+d[len(from):]] = true
		}
	}
}

// verify compares the filesystem with the model.
func verify(t *testing.T, fs *FS, m *model, when string) {
	t.Helper()
	for p, mf := range m.files {
		got, err := fs.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: read %s: %v", when, p, err)
		}
		if !bytes.Equal(got, mf.data) {
			t.Fatalf("%s: %s has %d bytes, model %d (or content differs)", when, p, len(got), len(mf.data))
		}
	}
	for d := range m.dirs {
		ents, err := fs.ReadDir(d)
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
	rep, err := fs.Check(false)
	if err != nil {
		t.Fatalf("%s: Check: %v", when, err)
	}
	if !rep.Clean() {
		t.Fatalf("%s: Check found:\n%s", when, rep)
	}
	cs := uint32(fs.ClusterSize())
	var need uint32
	for _, mf := range m.files {
		need += (uint32(len(mf.data)) + cs - 1) / cs
	}
	if rep.FileClusters != need {
		t.Fatalf("%s: files hold %d clusters, their sizes need %d", when, rep.FileClusters, need)
	}
	minDirs := uint32(len(m.dirs))
	if rep.DirClusters < minDirs {
		t.Fatalf("%s: %d directory clusters for %d directories", when, rep.DirClusters, minDirs)
	}
	st := fs.Statfs()
	if used := rep.FileClusters + rep.DirClusters + rep.SystemClusters + rep.OpenClusters; st.FreeClusters != st.TotalClusters-used {
		t.Fatalf("%s: Statfs says %d free clusters; total %d - files %d - dirs %d - system %d - open removed files %d = %d", when,
			st.FreeClusters, st.TotalClusters, rep.FileClusters, rep.DirClusters, rep.SystemClusters, rep.OpenClusters, st.TotalClusters-used)
	}
}
