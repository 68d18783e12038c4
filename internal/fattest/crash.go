package fattest

import (
	"bytes"
	"errors"
	"io"
	iofs "io/fs"
	"testing"
)

// ErrCrashed is what a CrashDev's writes fail with once it has "died".
var ErrCrashed = errors.New("simulated crash")

// NoCrash is a CrashDev limit no operation reaches.
const NoCrash = 1 << 30

// CrashDev is a MemDev that drops every write after the first Limit ones,
// as if the machine died there; Writes counts the ones that reached it.
type CrashDev struct {
	*MemDev
	Writes, Limit int
}

// NewCrashDev returns a CrashDev over data itself (not a copy).
func NewCrashDev(t testing.TB, data []byte, limit int) *CrashDev {
	return &CrashDev{MemDev: &MemDev{T: t, Data: data}, Limit: limit}
}

func (c *CrashDev) WriteAt(p []byte, off int64) (int, error) {
	if c.Writes >= c.Limit {
		return 0, ErrCrashed
	}
	c.Writes++
	return c.MemDev.WriteAt(p, off)
}

// CrashRuns runs op on a copy of base (opened with open, closed after)
// once undisturbed, to count its writes, and then on a fresh copy for
// every k from 0 to that total that step divides (and the total itself),
// crashing after k writes. The operation must notice each crash; check
// gets each crashed image. It returns the total.
func CrashRuns[F io.Closer](t *testing.T, base []byte, step int, open func(dev *CrashDev) F, op func(F) error, check func(k, total int, crashed []byte)) int {
	t.Helper()
	run := func(dev *CrashDev) error {
		fs := open(dev)
		err := op(fs)
		if cerr := fs.Close(); err == nil {
			err = cerr
		}
		return err
	}
	probe := NewCrashDev(t, bytes.Clone(base), NoCrash)
	if err := run(probe); err != nil {
		t.Fatalf("undisturbed run: %v", err)
	}
	total := probe.Writes
	for k := 0; k <= total; k++ {
		if k%step != 0 && k != total {
			continue
		}
		dev := NewCrashDev(t, bytes.Clone(base), k)
		if err := run(dev); k < total && !errors.Is(err, ErrCrashed) {
			t.Fatalf("k=%d: operation did not notice the crash: %v", k, err)
		}
		check(k, total, dev.Data)
	}
	return total
}

// OneOf asserts that file p of fsys holds one of the given contents (nil:
// absent).
func OneOf(t *testing.T, fsys interface {
	ReadFile(name string) ([]byte, error)
}, p string, states ...[]byte) {
	t.Helper()
	got, err := fsys.ReadFile(p)
	for _, s := range states {
		if s == nil && errors.Is(err, iofs.ErrNotExist) {
			return
		}
		if s != nil && err == nil && bytes.Equal(got, s) {
			return
		}
	}
	t.Errorf("%s is in neither the old nor the new state (err %v, %d bytes)", p, err, len(got))
}
