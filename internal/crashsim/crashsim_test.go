package crashsim

import (
	"bytes"
	"errors"
	"testing"
)

// memDev is a Device in memory that counts its flushes.
type memDev struct {
	b       []byte
	flushes int
}

func (m *memDev) ReadAt(p []byte, off int64) (int, error) { return copy(p, m.b[off:]), nil }
func (m *memDev) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > int64(len(m.b)) {
		return 0, errors.New("past the end")
	}
	return copy(m.b[off:], p), nil
}
func (m *memDev) Size() int64 { return int64(len(m.b)) }
func (m *memDev) Sync() error { m.flushes++; return nil }

func fill(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }

func TestRecorderLogsAndPassesOn(t *testing.T) {
	d := &memDev{b: make([]byte, 4096)}
	r := NewRecorder(d)
	buf := fill(10, 'a')
	r.WriteAt(buf, 100)
	buf[0] = 'X' // the log keeps what was written, not the caller's buffer
	r.Sync()
	r.WriteAt(fill(3, 'b'), 0)
	ops := r.Ops()
	if len(ops) != 3 || ops[0].Off != 100 || string(ops[0].Data) != "aaaaaaaaaa" || !ops[1].Flush || ops[2].Off != 0 {
		t.Fatalf("log %+v", ops)
	}
	if d.b[100] != 'a' || d.b[0] != 'b' || d.flushes != 1 {
		t.Fatalf("not passed on: %q %q flushes %d", d.b[100], d.b[0], d.flushes)
	}
}

func TestRecorderDropFlush(t *testing.T) {
	d := &memDev{b: make([]byte, 4096)}
	r := NewRecorder(d)
	r.DropFlush = func(n int) bool { return n == 1 }
	for i := 0; i < 3; i++ {
		r.WriteAt([]byte{byte(i)}, int64(i))
		r.Sync()
	}
	if r.Flushes() != 3 || d.flushes != 2 || len(Epochs(r.Ops())) != 3 {
		t.Fatalf("flushes asked %d, passed %d, epochs %d", r.Flushes(), d.flushes, len(Epochs(r.Ops())))
	}
}

// replay builds each state's image from base.
func replay(t *testing.T, base []byte, s State) []byte {
	d := &memDev{b: append([]byte(nil), base...)}
	if err := s.Apply(d); err != nil {
		t.Fatal(err)
	}
	return d.b
}

func TestStatesRespectFlushes(t *testing.T) {
	// Epoch 0: A (3 sectors) and B; flush; epoch 1: C and D; no flush.
	ops := []Op{
		{Off: 0, Data: fill(3*SectorSize, 'A')},
		{Off: 4 * SectorSize, Data: fill(SectorSize, 'B')},
		{Flush: true},
		{Off: 5 * SectorSize, Data: fill(SectorSize, 'C')},
		{Off: 6 * SectorSize, Data: fill(SectorSize, 'D')},
	}
	base := make([]byte, 8*SectorSize)
	states := States(ops, Options{Subsets: 20, Torn: 10, Seed: 1})
	sector := func(img []byte, i int) byte { return img[i*SectorSize] }
	var sawTorn, sawDWithoutC, sawNone bool
	for _, s := range states {
		img := replay(t, base, s)
		a := 0
		for i := 0; i < 3; i++ {
			if sector(img, i) == 'A' {
				a++
			}
		}
		for i := range img {
			// Sector writes are atomic: no sector holds a mix.
			if i%SectorSize != 0 && img[i] != img[i-i%SectorSize] {
				t.Fatalf("%s: sector %d mixed", s.Name, i/SectorSize)
			}
		}
		if s.Epoch == 1 && (a != 3 || sector(img, 4) != 'B') {
			t.Fatalf("%s: a flushed write is missing", s.Name)
		}
		if s.Epoch == 0 && (sector(img, 5) != 0 || sector(img, 6) != 0) {
			t.Fatalf("%s: a write after the flush is there", s.Name)
		}
		sawTorn = sawTorn || (a > 0 && a < 3)
		sawDWithoutC = sawDWithoutC || (sector(img, 6) == 'D' && sector(img, 5) == 0)
		sawNone = sawNone || bytes.Equal(img, base)
	}
	if !sawTorn || !sawDWithoutC || !sawNone {
		t.Fatalf("torn %v, reordered %v, nothing %v in %d states", sawTorn, sawDWithoutC, sawNone, len(states))
	}
	last := replay(t, base, states[len(states)-1])
	if sector(last, 5) != 'C' || sector(last, 6) != 'D' || sector(last, 2) != 'A' {
		t.Fatal("the last state is not the whole log")
	}
	// Prefixes: 3 of epoch 0 (0, 1, 2 writes) and 2 of epoch 1.
	prefixes := 0
	for _, s := range states {
		if bytes.Contains([]byte(s.Name), []byte("first")) {
			prefixes++
		}
	}
	if prefixes != 5 {
		t.Fatalf("%d prefix states, want 5", prefixes)
	}
}

func TestStatesEndingWithFlush(t *testing.T) {
	ops := []Op{{Off: 0, Data: []byte{1}}, {Flush: true}}
	states := States(ops, Options{})
	if len(states) != 2 || len(states[0].Writes) != 0 || len(states[1].Writes) != 1 {
		t.Fatalf("%+v", states)
	}
}

// Distinct keeps one of each set of writes: the subsets of a two-write
// epoch are at most 4 sets in 2 orders, however many are drawn.
func TestStatesDistinct(t *testing.T) {
	ops := []Op{
		{Off: 0, Data: fill(SectorSize, 'A')},
		{Off: SectorSize, Data: fill(SectorSize, 'B')},
		{Flush: true},
	}
	all := States(ops, Options{Subsets: 50, Seed: 3})
	distinct := States(ops, Options{Subsets: 50, Seed: 3, Distinct: true})
	if len(all) < 50 {
		t.Fatalf("%d states without Distinct, want the 50 draws and more", len(all))
	}
	// Prefixes 0, 1, 2 writes; subsets add at most {B} and {B, A}; the
	// whole log comes again last when a subset ended the list.
	if len(distinct) < 3 || len(distinct) > 6 {
		t.Fatalf("%d distinct states, want 3 to 6", len(distinct))
	}
	seen := map[string]bool{}
	for _, s := range distinct[:len(distinct)-1] {
		k := ""
		for _, w := range s.Writes {
			k += string(w.Data[0])
		}
		if seen[k] {
			t.Fatalf("%s repeats the writes %q", s.Name, k)
		}
		seen[k] = true
	}
	if last := distinct[len(distinct)-1]; len(last.Writes) != 2 {
		t.Fatalf("the last state %q is not the whole log", last.Name)
	}
}
