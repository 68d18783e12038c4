package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"path"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/cryptvol/cryptvol/filesystem"
)

// Device is one fresh, empty filesystem under test.
type Device struct {
	// Open opens the filesystem for writing. The suite closes the Writer
	// it returns and opens it again to see that everything stayed.
	Open func(t *testing.T) filesystem.Writer
	// Check runs the checkers that are not the Writer's own (fsck.vfat
	// -n, fsck.exfat -n, e2fsck -fn) on the closed filesystem, failing
	// the test on any finding; nil when there is none.
	Check func(t *testing.T)
}

// Target describes an implementation to TestWrites.
type Target struct {
	// New makes a fresh, empty filesystem of a few MiB (small enough
	// to fill quickly).
	New func(t *testing.T) Device
	// TimeResolution is the granularity of stored modification times.
	TimeResolution time.Duration
	// CaseInsensitive is set where names compare without case (FAT,
	// exFAT): "A.TXT" names "a.txt".
	CaseInsensitive bool
	// NameBytes is set where the 255 limit counts bytes (ext2/3/4)
	// rather than UTF-16 units (FAT, exFAT, NTFS).
	NameBytes bool
	// Skip names cases the implementation is known to fail, each with
	// the issue that tracks it: they are skipped with that message.
	Skip map[string]string
}

// TestWrites runs the write-semantics suite: each case on a fresh
// filesystem, then the filesystem is closed, opened again, read back,
// and checked by its own Checker and by Device.Check.
func TestWrites(t *testing.T, tg Target) {
	for _, c := range writeCases {
		t.Run(c.name, func(t *testing.T) {
			if why, ok := tg.Skip[c.name]; ok {
				t.Skip(why)
			}
			dev := tg.New(t)
			s := &session{t: t, tg: tg, dev: dev, model: map[string]string{}}
			s.w = dev.Open(t)
			// What a fresh filesystem holds (ext4's lost+found) stays.
			s.model = s.tree()
			c.run(s)
			s.reopen()
			s.verify()
			s.close()
		})
	}
}

// session is one case's filesystem and the model of what it must hold:
// regular files by name (as the filesystem lists them) and content;
// directories have the value dirMark.
type session struct {
	t     *testing.T
	tg    Target
	dev   Device
	w     filesystem.Writer
	model map[string]string
}

const dirMark = "\x00dir"

var writeCases = []struct {
	name string
	run  func(s *session)
}{
	{"create", (*session).create},
	{"overwrite", (*session).overwrite},
	{"writeat-append-truncate", (*session).writeAtAppendTruncate},
	{"rename-over", (*session).renameOver},
	{"rename-dir", (*session).renameDir},
	{"mkdir-p", (*session).mkdirAll},
	{"remove-r", (*session).removeAll},
	{"remove-nonempty", (*session).removeNonEmpty},
	{"remove-open", (*session).removeOpen},
	{"many-files", (*session).manyFiles},
	{"enospc", (*session).noSpace},
	{"enospc-directories", (*session).noSpaceForEntries},
	{"name-limits", (*session).nameLimits},
	{"unicode", (*session).unicode},
	{"case", (*session).caseRule},
	{"times", (*session).times},
	{"symlinks", (*session).symlinks},
	{"chmod", (*session).chmod},
}

func random(n int, seed int64) []byte {
	b := make([]byte, n)
	rand.New(rand.NewSource(seed)).Read(b)
	return b
}

func (s *session) put(name string, data []byte) {
	s.t.Helper()
	f, err := s.w.Create(name)
	if err != nil {
		s.t.Fatalf("Create(%q): %v", name, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		s.t.Fatalf("Write(%q, %d bytes): %v", name, len(data), err)
	}
	if err := f.Close(); err != nil {
		s.t.Fatalf("Close(%q): %v", name, err)
	}
	s.model[name] = string(data)
}

func (s *session) mkdir(name string) {
	s.t.Helper()
	if err := s.w.Mkdir(name); err != nil {
		s.t.Fatalf("Mkdir(%q): %v", name, err)
	}
	s.model[name] = dirMark
}

func (s *session) read(name string) (string, error) {
	f, err := s.w.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

func (s *session) expect(name, want string) {
	s.t.Helper()
	got, err := s.read(name)
	if err != nil || got != want {
		s.t.Errorf("%s: %d bytes (%v), want %d", name, len(got), err, len(want))
	}
}

func (s *session) gone(name string) {
	s.t.Helper()
	if _, err := s.w.Lstat(name); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Lstat(%q) after it was removed: %v, want fs.ErrNotExist", name, err)
	}
}

// reopen closes the Writer and opens the filesystem again.
func (s *session) reopen() {
	s.t.Helper()
	if err := s.w.Close(); err != nil {
		s.t.Fatalf("Close: %v", err)
	}
	s.w = s.dev.Open(s.t)
}

// tree reads the whole filesystem in the model's form.
func (s *session) tree() map[string]string {
	s.t.Helper()
	got := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		ents, err := s.w.ReadDir(dir)
		if err != nil {
			s.t.Errorf("ReadDir(%q): %v", dir, err)
			return
		}
		for _, e := range ents {
			p := strings.TrimPrefix(path.Join(dir, e.Name()), "/")
			switch {
			case e.IsDir():
				got[p] = dirMark
				walk("/" + p)
			case e.Type()&fs.ModeSymlink != 0:
				t, err := s.w.Readlink(p)
				if err != nil {
					s.t.Errorf("Readlink(%q): %v", p, err)
				}
				got[p] = "->" + t
			default:
				data, err := s.read(p)
				if err != nil {
					s.t.Errorf("read %q: %v", p, err)
				}
				got[p] = data
			}
		}
	}
	walk("/")
	return got
}

// verify compares the whole tree with the model.
func (s *session) verify() {
	s.t.Helper()
	got := s.tree()
	var diffs []string
	for n, w := range s.model {
		if g, ok := got[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("missing %q", n))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%q: %d bytes, want %d", n, len(g), len(w)))
		}
	}
	for n := range got {
		if _, ok := s.model[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected %q", n))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		s.t.Errorf("after reopening, the tree differs from the model:\n%s", strings.Join(diffs, "\n"))
	}
}

// close runs the Writer's own check, closes it and runs the external
// checkers.
func (s *session) close() {
	s.t.Helper()
	if c, ok := s.w.(filesystem.Checker); ok {
		rep, err := c.Check(false)
		if err != nil {
			s.t.Errorf("Check: %v", err)
		} else if !rep.Clean() {
			s.t.Errorf("Check is not clean:\n%s", rep.String())
		}
	}
	if err := s.w.Close(); err != nil {
		s.t.Errorf("Close: %v", err)
	}
	if s.dev.Check != nil {
		s.dev.Check(s.t)
	}
}

func (s *session) create() {
	s.mkdir("d")
	s.put("d/f.bin", random(100_000, 1))
	s.put("empty", nil)
	s.expect("d/f.bin", s.model["d/f.bin"])
	fi, err := s.w.Stat("d/f.bin")
	if err != nil || fi.Size() != 100_000 || !fi.Mode().IsRegular() {
		s.t.Errorf("Stat(d/f.bin) = %v, %v: want a regular file of 100000 bytes", fi, err)
	}
	if fi, err := s.w.Stat("d"); err != nil || !fi.IsDir() {
		s.t.Errorf("Stat(d) = %v, %v: want a directory", fi, err)
	}
	if _, err := s.w.Create("missing/f"); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Create under a missing directory: %v, want fs.ErrNotExist", err)
	}
	if _, err := s.w.Create("d/f.bin/x"); !errors.Is(err, filesystem.ErrNotDir) && !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Create under a file: %v, want filesystem.ErrNotDir or fs.ErrNotExist", err)
	}
	if _, err := s.w.Create("d"); !errors.Is(err, filesystem.ErrIsDir) {
		s.t.Errorf("Create over a directory: %v, want filesystem.ErrIsDir", err)
	}
}

func (s *session) overwrite() {
	s.put("f", random(300_000, 2))
	before := s.w.Statfs().FreeBytes
	s.put("f", []byte("short"))
	s.expect("f", "short")
	after := s.w.Statfs().FreeBytes
	if after < before+200_000 {
		s.t.Errorf("free space %d before overwriting 300000 bytes with 5, %d after: the old data was not freed", before, after)
	}
}

func (s *session) writeAtAppendTruncate() {
	f, err := s.w.Create("f")
	if err != nil {
		s.t.Fatal(err)
	}
	defer f.Close()
	model := []byte("0123456789")
	write := func(what string, err error) {
		if err != nil {
			s.t.Fatalf("%s: %v", what, err)
		}
	}
	_, err = f.Write(model)
	write("Write", err)
	// A write past the end leaves a hole that reads as zeros.
	_, err = f.WriteAt([]byte("far"), 70_000)
	write("WriteAt past the end", err)
	model = append(model, make([]byte, 70_000-len(model))...)
	model = append(model, "far"...)
	_, err = f.WriteAt([]byte("MID"), 4)
	write("WriteAt in the middle", err)
	copy(model[4:], "MID")
	_, err = f.Seek(0, io.SeekEnd)
	write("Seek to the end", err)
	_, err = f.Write([]byte("+appended"))
	write("Write after Seek(0, End)", err)
	model = append(model, "+appended"...)
	check := func(when string) {
		s.t.Helper()
		got := make([]byte, len(model)+10)
		n, err := f.ReadAt(got, 0)
		if n != len(model) || !bytes.Equal(got[:n], model) || err != io.EOF {
			s.t.Errorf("%s: ReadAt gives %d bytes (%v), want %d and io.EOF, same content: %v", when, n, err, len(model), bytes.Equal(got[:min(n, len(model))], model[:min(n, len(model))]))
		}
	}
	check("after writes")
	write("Truncate shrink", f.Truncate(5))
	model = model[:5]
	check("after shrinking")
	write("Truncate grow", f.Truncate(9000))
	model = append(model, make([]byte, 9000-5)...)
	check("after growing")
	write("Sync", f.Sync())
	write("Close", f.Close())
	s.model["f"] = string(model)
	s.expect("f", string(model))
}

func (s *session) renameOver() {
	s.put("a", []byte("the new content"))
	s.put("b", random(50_000, 3))
	if err := s.w.Rename("a", "b"); err != nil {
		s.t.Fatalf("Rename over an existing file: %v", err)
	}
	s.model["b"] = s.model["a"]
	delete(s.model, "a")
	s.gone("a")
	s.expect("b", "the new content")
	s.mkdir("d")
	if err := s.w.Rename("b", "d/c"); err != nil {
		s.t.Fatalf("Rename across directories: %v", err)
	}
	s.model["d/c"] = s.model["b"]
	delete(s.model, "b")
	s.gone("b")
	if err := s.w.Rename("missing", "x"); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Rename of a missing name: %v, want fs.ErrNotExist", err)
	}
	s.put("e", []byte("e"))
	if err := s.w.Rename("e", "d"); err == nil {
		s.t.Errorf("Rename of a file over a non-empty directory succeeded")
		delete(s.model, "e")
		delete(s.model, "d/c")
	}
}

func (s *session) renameDir() {
	s.mkdir("d")
	s.mkdir("d/sub")
	s.put("d/sub/f", []byte("deep"))
	s.put("d/g", random(20_000, 4))
	if err := s.w.Rename("d", "e"); err != nil {
		s.t.Fatalf("Rename of a directory: %v", err)
	}
	for n, v := range s.model {
		if n == "d" || strings.HasPrefix(n, "d/") {
			s.model["e"+n[1:]] = v
			delete(s.model, n)
		}
	}
	s.gone("d")
	s.expect("e/sub/f", "deep")
	s.mkdir("x")
	if err := s.w.Rename("e/sub", "x/moved"); err != nil {
		s.t.Fatalf("Rename of a directory into another: %v", err)
	}
	s.model["x/moved"] = dirMark
	s.model["x/moved/f"] = "deep"
	delete(s.model, "e/sub")
	delete(s.model, "e/sub/f")
	s.expect("x/moved/f", "deep")
	if err := s.w.Rename("x", "x/moved/inside"); err == nil {
		s.t.Errorf("Rename of a directory into itself succeeded")
	}
	// Over an empty directory it replaces it; over a non-empty one it
	// fails and changes nothing.
	s.mkdir("empty")
	if err := s.w.Rename("x", "empty"); err != nil {
		s.t.Fatalf("Rename of a directory over an empty one: %v", err)
	}
	for n, v := range s.model {
		if n == "x" || strings.HasPrefix(n, "x/") {
			s.model["empty"+n[1:]] = v
			delete(s.model, n)
		}
	}
	s.gone("x")
	s.expect("empty/moved/f", "deep")
	if err := s.w.Rename("e", "empty"); !errors.Is(err, filesystem.ErrNotEmpty) {
		s.t.Errorf("Rename of a directory over a non-empty one: %v, want filesystem.ErrNotEmpty", err)
	}
}

// MkdirAll makes name and the directories above it that are missing,
// with only Writer's Mkdir (mkdir -p as every front end does it).
func MkdirAll(w filesystem.Writer, name string) error {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		if err := w.Mkdir(p); err != nil {
			if fi, serr := w.Stat(p); serr == nil && errors.Is(err, fs.ErrExist) {
				if fi.IsDir() {
					continue
				}
				return &fs.PathError{Op: "mkdir", Path: p, Err: filesystem.ErrNotDir}
			}
			return err
		}
	}
	return nil
}

// RemoveAll removes name and everything below it (rm -r).
func RemoveAll(w filesystem.Writer, name string) error {
	fi, err := w.Lstat(name)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		ents, err := w.ReadDir(name)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := RemoveAll(w, name+"/"+e.Name()); err != nil {
				return err
			}
		}
	}
	return w.Remove(name)
}

func (s *session) mkdirAll() {
	if err := MkdirAll(s.w, "a/b/c/d"); err != nil {
		s.t.Fatalf("mkdir -p a/b/c/d: %v", err)
	}
	if err := MkdirAll(s.w, "a/b/c/e"); err != nil {
		s.t.Fatalf("mkdir -p a/b/c/e (a/b/c exists): %v", err)
	}
	for _, d := range []string{"a", "a/b", "a/b/c", "a/b/c/d", "a/b/c/e"} {
		s.model[d] = dirMark
	}
	if err := s.w.Mkdir("a/b"); !errors.Is(err, fs.ErrExist) {
		s.t.Errorf("Mkdir of an existing directory: %v, want fs.ErrExist", err)
	}
	if err := s.w.Mkdir("x/y"); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Mkdir under a missing directory: %v, want fs.ErrNotExist", err)
	}
	s.put("a/f", []byte("f"))
	if err := s.w.Mkdir("a/f"); !errors.Is(err, fs.ErrExist) {
		s.t.Errorf("Mkdir over a file: %v, want fs.ErrExist", err)
	}
	if err := MkdirAll(s.w, "a/f/g"); !errors.Is(err, filesystem.ErrNotDir) && !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("mkdir -p through a file: %v, want filesystem.ErrNotDir or fs.ErrNotExist", err)
	}
}

func (s *session) removeAll() {
	s.put("keep", []byte("stays"))
	for i := 0; i < 5; i++ {
		d := fmt.Sprintf("t/%d/x/y", i)
		if err := MkdirAll(s.w, d); err != nil {
			s.t.Fatal(err)
		}
		f, err := s.w.Create(fmt.Sprintf("t/%d/x/file", i))
		if err != nil {
			s.t.Fatal(err)
		}
		f.Write(random(5000*i, int64(i)))
		f.Close()
	}
	free := s.w.Statfs().FreeBytes
	if err := RemoveAll(s.w, "t"); err != nil {
		s.t.Fatalf("rm -r t: %v", err)
	}
	s.gone("t")
	if got := s.w.Statfs().FreeBytes; got <= free {
		s.t.Errorf("free space %d before rm -r, %d after", free, got)
	}
	if err := s.w.Remove("t"); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Remove of a removed name: %v, want fs.ErrNotExist", err)
	}
}

func (s *session) removeNonEmpty() {
	s.mkdir("d")
	s.put("d/f", []byte("inside"))
	err := s.w.Remove("d")
	if !errors.Is(err, filesystem.ErrNotEmpty) {
		s.t.Errorf("Remove of a non-empty directory: %v, want filesystem.ErrNotEmpty", err)
	}
	s.expect("d/f", "inside")
	s.mkdir("e")
	if err := s.w.Remove("e"); err != nil {
		s.t.Errorf("Remove of an empty directory: %v", err)
	}
	delete(s.model, "e")
	s.gone("e")
}

// removeOpen removes a file that is open: the name goes at once, the
// content stays readable through the handle until it is closed, and a
// new file of the same name is another file.
func (s *session) removeOpen() {
	s.put("f", random(40_000, 8))
	data := s.model["f"]
	f, err := s.w.Open("f")
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.w.Remove("f"); err != nil {
		f.Close()
		s.t.Fatalf("Remove of an open file: %v", err)
	}
	delete(s.model, "f")
	s.gone("f")
	s.put("f", []byte("a new file"))
	got, err := io.ReadAll(f)
	if err != nil || string(got) != data {
		s.t.Errorf("reading a removed file through its open handle: %d bytes (%v), want %d", len(got), err, len(data))
	}
	if err := f.Close(); err != nil {
		s.t.Errorf("Close of a removed file: %v", err)
	}
	s.expect("f", "a new file")
}

func (s *session) manyFiles() {
	s.mkdir("many")
	for i := 0; i < 300; i++ {
		s.put(fmt.Sprintf("many/file-with-a-long-name-%04d.txt", i), []byte(fmt.Sprint(i)))
	}
	ents, err := s.w.ReadDir("many")
	if err != nil || len(ents) != 300 {
		s.t.Fatalf("ReadDir(many): %d entries (%v), want 300", len(ents), err)
	}
	for i := 0; i < 300; i += 2 {
		n := fmt.Sprintf("many/file-with-a-long-name-%04d.txt", i)
		if err := s.w.Remove(n); err != nil {
			s.t.Fatalf("Remove(%s): %v", n, err)
		}
		delete(s.model, n)
	}
	// Fill the freed slots again.
	for i := 0; i < 40; i++ {
		s.put(fmt.Sprintf("many/again-%d", i), []byte("again"))
	}
}

func (s *session) noSpace() {
	s.mkdir("d")
	s.put("d/before", random(30_000, 5))
	f, err := s.w.Create("fill")
	if err != nil {
		s.t.Fatal(err)
	}
	chunk := random(256<<10, 6)
	total := s.w.Statfs().TotalBytes
	var written int64
	for {
		n, err := f.Write(chunk)
		written += int64(n)
		if err != nil {
			if !errors.Is(err, filesystem.ErrNoSpace) {
				s.t.Errorf("Write when full: %v, want filesystem.ErrNoSpace", err)
			}
			break
		}
		if written > 2*total {
			s.t.Fatalf("wrote %d bytes to a filesystem of %d without an error", written, total)
		}
	}
	if err := f.Close(); err != nil && !errors.Is(err, filesystem.ErrNoSpace) {
		s.t.Errorf("Close of the file that filled the filesystem: %v", err)
	}
	fi, err := s.w.Stat("fill")
	if err != nil {
		s.t.Fatalf("Stat(fill): %v", err)
	}
	if fi.Size() > written {
		s.t.Errorf("fill is %d bytes, only %d were written", fi.Size(), written)
	}
	s.t.Logf("full after %d bytes (file %d, filesystem %d, free %d)", written, fi.Size(), total, s.w.Statfs().FreeBytes)
	// What was written before is intact, and so is what fill holds.
	s.expect("d/before", s.model["d/before"])
	want := bytes.Repeat(chunk, int(fi.Size())/len(chunk)+1)[:fi.Size()]
	s.model["fill"] = string(want)
	s.expect("fill", string(want))
	// A new file or directory fails cleanly too, or fits in what is left.
	if err := s.w.Mkdir("more"); err == nil {
		s.model["more"] = dirMark
	} else if !errors.Is(err, filesystem.ErrNoSpace) {
		s.t.Errorf("Mkdir on a full filesystem: %v, want success or filesystem.ErrNoSpace", err)
	}
	if err := s.w.Remove("fill"); err != nil {
		s.t.Fatalf("Remove(fill): %v", err)
	}
	delete(s.model, "fill")
	s.put("after", random(100_000, 7))
}

// noSpaceForEntries fills the data area, then creates empty files and
// directories until a directory cannot grow: the error wraps ErrNoSpace,
// every name made before it is there, and the checkers find nothing.
func (s *session) noSpaceForEntries() {
	s.mkdir("d")
	f, err := s.w.Create("fill")
	if err != nil {
		s.t.Fatal(err)
	}
	chunk := random(64<<10, 9)
	var written int64
	for {
		n, err := f.Write(chunk)
		written += int64(n)
		if err != nil {
			break
		}
		if written > 2*s.w.Statfs().TotalBytes {
			s.t.Fatal("no error writing twice the filesystem's size")
		}
	}
	f.Close()
	fi, err := s.w.Stat("fill")
	if err != nil {
		s.t.Fatal(err)
	}
	s.model["fill"] = string(bytes.Repeat(chunk, int(fi.Size())/len(chunk)+1)[:fi.Size()])
	for i := 0; ; i++ {
		if i == 100_000 {
			s.t.Fatal("100000 names made in a full filesystem without an error")
		}
		name := fmt.Sprintf("d/entry-with-a-long-name-%06d", i)
		var err error
		if i%2 == 0 {
			err = s.w.Mkdir(name)
		} else {
			var g filesystem.WritableFile
			if g, err = s.w.Create(name); err == nil {
				err = g.Close()
			}
		}
		if err != nil {
			if !errors.Is(err, filesystem.ErrNoSpace) {
				s.t.Errorf("name %d in a full filesystem: %v, want filesystem.ErrNoSpace", i, err)
			}
			if _, serr := s.w.Lstat(name); serr == nil {
				// A name that failed may exist only if it is whole.
				if i%2 == 0 {
					s.model[name] = dirMark
				} else {
					s.model[name] = ""
				}
			}
			s.t.Logf("full after %d names", i)
			break
		}
		if i%2 == 0 {
			s.model[name] = dirMark
		} else {
			s.model[name] = ""
		}
	}
}

// longName returns a name of n units of the target's unit, of
// characters of the given UTF-8 width (1-4).
func longName(n int, unit string) string {
	var b strings.Builder
	for b.Len() < n*len(unit) {
		b.WriteString(unit)
	}
	return b.String()
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func (s *session) nameLimits() {
	type name struct {
		what string
		n    string
	}
	var ok, bad []name
	ok = append(ok, name{"255 ASCII", strings.Repeat("n", 251) + ".txt"})
	bad = append(bad, name{"256 ASCII", strings.Repeat("n", 252) + ".txt"})
	if s.tg.NameBytes {
		ok = append(ok, name{"85 three-byte characters (255 bytes)", longName(85, "日")})
		bad = append(bad, name{"86 three-byte characters (258 bytes)", longName(86, "日")})
	} else {
		ok = append(ok, name{"255 UTF-16 units of surrogate pairs", longName(127, "😀") + "a"})
		bad = append(bad, name{"256 UTF-16 units of surrogate pairs", longName(128, "😀")})
		ok = append(ok, name{"255 two-byte characters", longName(255, "é")})
	}
	s.mkdir("d")
	for _, c := range ok {
		if !s.tg.NameBytes && utf16Len(c.n) != 255 || s.tg.NameBytes && len(c.n) != 255 {
			s.t.Fatalf("test bug: %s is not 255 units", c.what)
		}
		s.put("d/"+c.n, []byte(c.what))
		s.expect("d/"+c.n, c.what)
	}
	for _, c := range bad {
		_, err := s.w.Create("d/" + c.n)
		if !errors.Is(err, filesystem.ErrInvalidName) {
			s.t.Errorf("Create of a name of %s: %v, want filesystem.ErrInvalidName", c.what, err)
		}
		if err := s.w.Mkdir("d/" + c.n); !errors.Is(err, filesystem.ErrInvalidName) {
			s.t.Errorf("Mkdir of a name of %s: %v, want filesystem.ErrInvalidName", c.what, err)
		}
		if err := s.w.Rename("d/"+ok[0].n, "d/"+c.n); !errors.Is(err, filesystem.ErrInvalidName) {
			s.t.Errorf("Rename to a name of %s: %v, want filesystem.ErrInvalidName", c.what, err)
		}
	}
	ents, err := s.w.ReadDir("d")
	if err != nil || len(ents) != len(ok) {
		s.t.Errorf("ReadDir(d): %d entries (%v), want the %d that fit", len(ents), err, len(ok))
	}
}

func (s *session) unicode() {
	names := []string{
		"Übung.txt",
		"caf\u00e9",  // NFC
		"cafe\u0301", // NFD: another name, kept as written
		"emoji 😀 name.txt",
		"𝄞 music",
		"日本語のファイル名.dat",
		"Ωμέγα",
	}
	s.mkdir("dir 😀")
	for i, n := range names {
		s.put(n, []byte(fmt.Sprint("content ", i)))
		s.put("dir 😀/"+n, []byte(fmt.Sprint("inner ", i)))
	}
	for i, n := range names {
		s.expect(n, fmt.Sprint("content ", i))
	}
	ents, err := s.w.ReadDir("/")
	if err != nil {
		s.t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		seen[e.Name()] = true
	}
	for _, n := range names {
		if !seen[n] {
			s.t.Errorf("ReadDir(/) does not list %q (%+q) byte for byte", n, n)
		}
	}
	if err := s.w.Rename("caf\u00e9", "dir 😀/renamed 𝄞"); err != nil {
		s.t.Fatal(err)
	}
	s.model["dir 😀/renamed 𝄞"] = s.model["caf\u00e9"]
	delete(s.model, "caf\u00e9")
	s.expect("cafe\u0301", s.model["cafe\u0301"])
}

func (s *session) caseRule() {
	s.put("Hello.txt", []byte("mixed case"))
	fi, err := s.w.Stat("HELLO.TXT")
	if s.tg.CaseInsensitive {
		if err != nil {
			s.t.Fatalf("Stat(HELLO.TXT) of Hello.txt on a case-insensitive filesystem: %v", err)
		}
		if fi.Name() != "Hello.txt" && fi.Name() != "HELLO.TXT" {
			s.t.Errorf("Stat(HELLO.TXT) names %q", fi.Name())
		}
		// Create of the other spelling truncates the same file.
		f, err := s.w.Create("hello.TXT")
		if err != nil {
			s.t.Fatal(err)
		}
		f.Write([]byte("same file"))
		f.Close()
		s.model["Hello.txt"] = "same file"
		s.expect("Hello.txt", "same file")
		ents, _ := s.w.ReadDir("/")
		if len(ents) != 1 || ents[0].Name() != "Hello.txt" {
			s.t.Errorf("after Create of another spelling, / lists %v, want Hello.txt alone (its spelling kept)", names(ents))
		}
		// A rename that only changes case changes the spelling.
		if err := s.w.Rename("Hello.txt", "HELLO.txt"); err != nil {
			s.t.Fatalf("Rename changing only case: %v", err)
		}
		s.model["HELLO.txt"] = s.model["Hello.txt"]
		delete(s.model, "Hello.txt")
		return
	}
	if !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Stat(HELLO.TXT) of Hello.txt on a case-sensitive filesystem: %v, want fs.ErrNotExist", err)
	}
	s.put("HELLO.TXT", []byte("another file"))
	s.expect("Hello.txt", "mixed case")
}

func names(ents []fs.DirEntry) []string {
	var n []string
	for _, e := range ents {
		n = append(n, e.Name())
	}
	return n
}

func (s *session) times() {
	res := s.tg.TimeResolution
	mt := time.Date(2031, 5, 6, 7, 8, 9, 123456789, time.UTC)
	at := time.Date(2030, 1, 2, 3, 4, 6, 0, time.UTC)
	s.put("f", []byte("x"))
	s.mkdir("d")
	want := mt.Truncate(res)
	for _, n := range []string{"f", "d"} {
		if err := s.w.Chtimes(n, at, mt); err != nil {
			s.t.Fatalf("Chtimes(%s): %v", n, err)
		}
		fi, err := s.w.Stat(n)
		if err != nil {
			s.t.Fatal(err)
		}
		if !fi.ModTime().Equal(want) {
			s.t.Errorf("%s: mtime %v after Chtimes(%v), want %v (resolution %v)", n, fi.ModTime().UTC(), mt, want, res)
		}
	}
	s.reopen()
	for _, n := range []string{"f", "d"} {
		fi, err := s.w.Stat(n)
		if err != nil {
			s.t.Fatal(err)
		}
		if !fi.ModTime().Equal(want) {
			s.t.Errorf("%s: mtime %v after reopening, want %v", n, fi.ModTime().UTC(), want)
		}
	}
	// A write moves mtime to now (within the resolution and a minute).
	f, err := s.w.Create("g")
	if err != nil {
		s.t.Fatal(err)
	}
	f.Write([]byte("now"))
	f.Close()
	s.model["g"] = "now"
	fi, err := s.w.Stat("g")
	if err != nil {
		s.t.Fatal(err)
	}
	if d := time.Since(fi.ModTime()); d < -res || d > time.Minute+res {
		s.t.Errorf("mtime of a new file is %v, %v from now", fi.ModTime(), d)
	}
}

func (s *session) chmod() {
	cm, ok := s.w.(filesystem.Chmoder)
	if !ok {
		s.t.Skipf("%s keeps no permission bits (filesystem.Chmoder not implemented)", s.w.Type())
	}
	s.put("f", []byte("x"))
	s.mkdir("d")
	for _, c := range []struct {
		name string
		mode fs.FileMode
	}{{"f", 0o600}, {"f", 0o755}, {"d", 0o700}, {"f", 0o4711}} {
		want := c.mode & fs.ModePerm
		if err := cm.Chmod(c.name, c.mode); err != nil {
			s.t.Fatalf("Chmod(%s, %o): %v", c.name, c.mode, err)
		}
		fi, err := s.w.Stat(c.name)
		if err != nil || fi.Mode().Perm() != want {
			s.t.Errorf("Chmod(%s, %o): mode %v (%v), want permissions %o", c.name, c.mode, fi.Mode(), err, want)
		}
	}
	s.reopen()
	if fi, err := s.w.Stat("d"); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
		s.t.Errorf("d after reopening: %v, %v; want a directory with 0700", fi, err)
	}
}

func (s *session) symlinks() {
	sl, ok := s.w.(filesystem.Symlinker)
	if !ok {
		s.t.Skipf("%s has no symbolic links (filesystem.Symlinker not implemented)", s.w.Type())
	}
	s.mkdir("d")
	s.put("d/target", []byte("through the link"))
	for _, l := range []struct{ name, target string }{
		{"rel", "d/target"},
		{"d/up", "../d/target"},
		{"abs", "/d/target"},
		{"dangling", "nowhere"},
		{"dirlink", "d"},
		{"long", strings.Repeat("x/", 200) + "y"}, // a slow link (target not in the inode)
	} {
		if err := sl.Symlink(l.target, l.name); err != nil {
			s.t.Fatalf("Symlink(%q, %q): %v", l.target, l.name, err)
		}
		s.model[l.name] = "->" + l.target
		if got, err := s.w.Readlink(l.name); got != l.target || err != nil {
			s.t.Errorf("Readlink(%q) = %q, %v; want %q", l.name, got, err, l.target)
		}
		fi, err := s.w.Lstat(l.name)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			s.t.Errorf("Lstat(%q) = %v, %v: want a symbolic link", l.name, fi, err)
		}
	}
	for _, n := range []string{"rel", "d/up", "abs"} {
		s.expect(n, "through the link")
	}
	s.expect("dirlink/target", "through the link")
	if _, err := s.w.Stat("dangling"); !errors.Is(err, fs.ErrNotExist) {
		s.t.Errorf("Stat of a dangling link: %v, want fs.ErrNotExist", err)
	}
	if err := sl.Symlink("x", "rel"); !errors.Is(err, fs.ErrExist) {
		s.t.Errorf("Symlink over an existing name: %v, want fs.ErrExist", err)
	}
	if err := s.w.Remove("rel"); err != nil {
		s.t.Fatal(err)
	}
	delete(s.model, "rel")
	s.gone("rel")
	s.expect("d/target", "through the link")
}
