package fattest

import (
	"errors"
	iofs "io/fs"
	"os"
	"testing"
)

// ExpectCorrupt fails the test unless err wraps corrupt (the package's
// ErrCorrupt), and logs it when it does: a run shows what each refusal
// said.
func ExpectCorrupt(t testing.TB, corrupt error, what string, err error) {
	t.Helper()
	if !errors.Is(err, corrupt) {
		t.Errorf("%s: got %v, want an error wrapping %v", what, err, corrupt)
	} else {
		t.Logf("%s: %v", what, err)
	}
}

// DamagedFS is what the bad-input checks use of a filesystem; R is its
// *CheckReport.
type DamagedFS[F any, R any] interface {
	ReadFile(name string) ([]byte, error)
	ReadDir(name string) ([]iofs.DirEntry, error)
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	OpenFile(name string, flag int, perm iofs.FileMode) (F, error)
	Mkdir(name string) error
	Remove(name string) error
	Check(repair bool) (R, error)
}

// RefusesDamagedFile checks a volume whose file name has a damaged
// chain (a loop, say): reading it, opening it for writing and removing it
// fail with corrupt, the sound /ok.txt still reads "fine", and, unless
// badEntries is nil, Check(false) reports bad entries (badEntries counts
// them in its report).
func RefusesDamagedFile[F any, R any](t *testing.T, fs DamagedFS[F, R], name string, corrupt error, badEntries func(R) int) {
	t.Helper()
	_, err := fs.ReadFile(name)
	ExpectCorrupt(t, corrupt, "read", err)
	_, err = fs.OpenFile(name, os.O_RDWR, 0)
	ExpectCorrupt(t, corrupt, "open for writing", err)
	ExpectCorrupt(t, corrupt, "remove", fs.Remove(name))
	othersFine(t, fs, badEntries)
}

// RefusesDamagedDir is RefusesDamagedFile for a directory full of
// garbage: listing it, creating a file and making a directory in it fail
// with corrupt.
func RefusesDamagedDir[F any, R any](t *testing.T, fs DamagedFS[F, R], dir string, corrupt error, badEntries func(R) int) {
	t.Helper()
	_, err := fs.ReadDir(dir)
	ExpectCorrupt(t, corrupt, "readdir", err)
	ExpectCorrupt(t, corrupt, "create in it", fs.WriteFile(dir+"/new.txt", []byte("x"), 0o644))
	ExpectCorrupt(t, corrupt, "mkdir in it", fs.Mkdir(dir+"/sub"))
	othersFine(t, fs, badEntries)
}

func othersFine[F any, R any](t *testing.T, fs DamagedFS[F, R], badEntries func(R) int) {
	t.Helper()
	if b, err := fs.ReadFile("/ok.txt"); err != nil || string(b) != "fine" {
		t.Errorf("other file damaged: %q, %v", b, err)
	}
	if badEntries == nil {
		return
	}
	r, err := fs.Check(false)
	if err != nil || badEntries(r) == 0 {
		t.Errorf("Check: %v %v", err, r)
	}
}
