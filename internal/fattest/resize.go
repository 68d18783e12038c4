package fattest

import (
	"bytes"
	"fmt"
	iofs "io/fs"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
)

// Resized is a filesystem opened read-only on a crash state of a resize.
type Resized interface {
	ReadFile(name string) ([]byte, error)
	Close() error
}

// ResizeRun is one resize for ExploreResize, with what differs between
// FAT and exFAT.
type ResizeRun[F Resized] struct {
	Base  *MemDev           // the filesystem before; the result is left here
	Files map[string][]byte // what it holds, which no state may lose
	// Open opens dev (len(Base.Data) bytes) read-only.
	Open func(dev *MemDev) (F, error)
	// Extent is the size the filesystem declares (FAT: its bytes, exFAT:
	// the end of its cluster heap).
	Extent func(F) int64
	// Steps: the resize goes through sizes between the old and the new
	// one (exFAT's bitmap moves a cluster of bits at a time), so a state
	// may declare any of them; otherwise only the old or the new.
	Steps bool
	// Resize runs the resize on dev and returns the new extent.
	Resize func(dev crashsim.Device) (int64, error)
	// Clean checks the finished result with the package's own checker.
	Clean func(F) error
	// Fsck, when set, checks the finished result with the host's tool.
	Fsck func(t *testing.T, m *MemDev)
}

// syncMem is a MemDev under a crashsim recorder.
type syncMem struct{ *MemDev }

func (d syncMem) Size() int64 { return int64(len(d.Data)) }
func (d syncMem) Sync() error { return nil }

// ExploreResize runs r.Resize on a copy of r.Base through a crashsim
// recorder and judges every state a crash can leave (every prefix of the
// writes for a kill; for a power cut random subsets of the unflushed
// ones, torn at sectors): each must open read-only with every file
// intact and declare the old or the new size (or, with Steps, one
// between). Then it applies the whole run to r.Base, checks the result
// and returns the extent it made.
func ExploreResize[F Resized](t *testing.T, r ResizeRun[F]) int64 {
	t.Helper()
	size := int64(len(r.Base.Data))
	before, err := r.Open(r.Base)
	if err != nil {
		t.Fatal(err)
	}
	old := r.Extent(before)
	before.Close()
	work := NewMemDev(t, size)
	copy(work.Data, r.Base.Data)
	rec := crashsim.NewRecorder(syncMem{work})
	got, err := r.Resize(rec)
	if err != nil {
		t.Fatal(err)
	}
	ops := rec.Ops()
	states := append(crashsim.States(ops, crashsim.Options{Subsets: 20, Torn: 4, Seed: 1}), crashsim.KillStates(ops)...)
	failed := 0
	for _, s := range states {
		m := NewMemDev(t, size)
		copy(m.Data, r.Base.Data)
		if err := s.Apply(m); err != nil {
			t.Fatal(err)
		}
		fsys, err := r.Open(m)
		if err == nil {
			n := r.Extent(fsys)
			switch {
			case r.Steps && (n < min(old, got) || n > max(old, got)):
				err = fmt.Errorf("declares %d bytes, outside the old %d to the new %d", n, old, got)
			case !r.Steps && n != old && n != got:
				err = fmt.Errorf("declares %d bytes, neither the old %d nor the new %d", n, old, got)
			default:
				err = SameFiles(fsys, r.Files)
			}
			fsys.Close()
		}
		if err != nil {
			if failed++; failed <= 5 {
				t.Errorf("%s: %v", s.Name, err)
			}
		}
	}
	copy(r.Base.Data, work.Data)
	fsys, err := r.Open(r.Base)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Clean(fsys)
	if err == nil {
		err = SameFiles(fsys, r.Files)
	}
	fsys.Close()
	if err != nil {
		t.Fatalf("the result: %v", err)
	}
	if r.Fsck != nil {
		r.Fsck(t, r.Base)
	}
	t.Logf("%d → %d bytes: %d writes, %d crash states, %d failed", old, got, crashsim.Writes(ops), len(states), failed)
	return got
}

// SameFiles reports the first of files that fsys does not hold as it is.
func SameFiles(fsys interface {
	ReadFile(name string) ([]byte, error)
}, files map[string][]byte) error {
	for name, want := range files {
		got, err := fsys.ReadFile(name)
		if err != nil {
			return fmt.Errorf("a file there before is lost: %v", err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s changed", name)
		}
	}
	return nil
}

// ResizeFiles writes six files of about a fortieth of size each into
// the root of fsys, closes it and returns them, path to content: what a
// resize explorer checks every state for.
func ResizeFiles(t *testing.T, fsys interface {
	WriteFile(name string, data []byte, perm iofs.FileMode) error
	Close() error
}, size int64) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("/f%d.bin", i)
		files[name] = Pattern(i, int(size/40)+i*777)
		MustWrite(t, fsys, name, files[name])
	}
	if err := fsys.Close(); err != nil {
		t.Fatal(err)
	}
	return files
}

// OwnCheck is ResizeRun.Clean for fat and exfat: the result of the
// package's own read-only check (FS.Check(false)), an error when the
// report lists errors.
func OwnCheck[R interface{ Errors() bool }](rep R, err error) error {
	if err == nil && rep.Errors() {
		err = fmt.Errorf("our check:\n%v", rep)
	}
	return err
}
