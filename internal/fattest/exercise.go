package fattest

import (
	"errors"
	"io"
	iofs "io/fs"
	"testing"
)

// exerciseFile is what Exercise does with a file it created.
type exerciseFile interface {
	Write(p []byte) (int, error)
	Truncate(size int64) error
	Close() error
}

// ExerciseFS is what Exercise calls: the read side, Check, and a few
// changes. R is the package's *CheckReport, S its Statfs.
type ExerciseFS[F exerciseFile, I any, R any, S any] interface {
	ReadDir(name string) ([]iofs.DirEntry, error)
	ReadFile(name string) ([]byte, error)
	Stat(name string) (I, error)
	Check(repair bool) (R, error)
	Statfs() S
	Label() string
	Create(name string) (F, error)
	Mkdir(name string) error
	Rename(oldpath, newpath string) error
	RemoveAll(name string) error
	Close() error
}

// Exercise walks, reads, checks and writes whatever Open accepted of a
// damaged or random image (the bad-input and fuzz tests); errors are
// fine, panics and out-of-range I/O (MemDev fails the test) are not. The
// walk is bounded (200 entries, depth 4) so a directory loop or a huge
// garbage directory cannot make it run away.
func Exercise[F exerciseFile, I any, R any, S any](t testing.TB, fs ExerciseFS[F, I, R, S]) {
	var walk func(dir string, depth int)
	seen := 0
	walk = func(dir string, depth int) {
		ents, _ := fs.ReadDir(dir)
		for _, e := range ents {
			if seen++; seen > 200 {
				return
			}
			p := dir + "/" + e.Name()
			if e.IsDir() {
				if depth < 4 {
					walk(p, depth+1)
				}
				continue
			}
			fs.ReadFile(p)
			fs.Stat(p)
		}
	}
	walk("", 0)
	fs.Check(false)
	fs.Statfs()
	fs.Label()
	if f, err := fs.Create("/fuzz written.txt"); err == nil {
		f.Write(Pattern(3, 3000))
		f.Truncate(100)
		f.Close()
	}
	fs.Mkdir("/fuzz dir")
	fs.Rename("/fuzz written.txt", "/fuzz dir/moved.txt")
	fs.RemoveAll("/fuzz dir")
	fs.Check(true)
	fs.Close()
}

// FuzzOpen is the body of the packages' FuzzOpen: data (cut to size)
// laid over a device of size zero bytes, opened with open; an Open error
// must wrap one of wants, and whatever Open accepts is Exercised.
func FuzzOpen[F exerciseFile, I any, R any, S any, V ExerciseFS[F, I, R, S]](t *testing.T, size int64, data []byte, open func(dev io.ReaderAt, size int64) (V, error), wants ...error) {
	if int64(len(data)) > size {
		data = data[:size]
	}
	m := NewMemDev(t, size)
	copy(m.Data, data)
	fs, err := open(m, size)
	if err != nil {
		for _, want := range wants {
			if errors.Is(err, want) {
				return
			}
		}
		t.Fatalf("Open error wraps none of %v: %v", wants, err)
	}
	Exercise[F, I, R, S](t, fs)
}
