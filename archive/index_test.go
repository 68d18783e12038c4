package archive

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The open-addressing table against a Go map, through puts, replacements,
// deletions (backward-shift) and tidying.
func TestIndexAgainstMap(t *testing.T) {
	x := newIndex()
	model := map[string]int64{}
	rng := rand.New(rand.NewPCG(3, 4))
	for step := 0; step < 200_000; step++ {
		nm := fmt.Sprintf("n%d", rng.IntN(5000))
		if rng.IntN(3) == 0 {
			_, ok := model[nm]
			if got := x.del([]byte(nm), uint64(step), true); got != ok {
				t.Fatalf("del(%s) = %v, model %v", nm, got, ok)
			}
			delete(model, nm)
		} else {
			o := op{kind: opFile, gen: uint64(step), name: []byte(nm), size: int64(step), offset: headerSize}
			if err := x.put(&o); err != nil {
				t.Fatal(err)
			}
			model[nm] = int64(step)
		}
		if step%1000 == 0 {
			x.tidy()
		}
	}
	if x.live != len(model) {
		t.Fatalf("live %d, model %d", x.live, len(model))
	}
	for nm, size := range model {
		pos := x.findString(nm)
		if pos < 0 || x.ents[pos].size != size {
			t.Fatalf("%s: pos %d", nm, pos)
		}
	}
	for i := 0; i < 5000; i++ {
		nm := fmt.Sprintf("n%d", i)
		if _, ok := model[nm]; !ok && x.findString(nm) >= 0 {
			t.Fatalf("%s found after deletion", nm)
		}
	}
	// Generations stay in order, so a run is a suffix.
	for i := 1; i < len(x.ents); i++ {
		if x.ents[i].gen < x.ents[i-1].gen {
			t.Fatal("entries out of generation order")
		}
	}
}

func TestLookupDoesNotAllocate(t *testing.T) {
	x := newIndex()
	for i := 0; i < 1000; i++ {
		o := op{kind: opFile, name: []byte(name(i))}
		x.put(&o)
	}
	nm := name(500)
	if n := testing.AllocsPerRun(100, func() { x.findString(nm) }); n != 0 {
		t.Fatalf("lookup allocates %v times", n)
	}
}

// The per-chunk paths allocate nothing: sealing and opening chunks of a
// stream, and reading a multi-chunk member through a Member.
func TestChunkPathsDoNotAllocate(t *testing.T) {
	for _, c := range []Cipher{AES256GCM, XChaCha20Poly1305} {
		k := deriveKeys(c, make([]byte, 32))
		var r, id [16]byte
		s, err := newStream(c, &k.record, &r, &id, 1000)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, ChunkSize, ChunkSize+TagSize)
		if n := testing.AllocsPerRun(20, func() {
			ct := s.seal(buf[:0], buf, 3, false)
			if _, err := s.open(ct[:0], ct, 3, false); err != nil {
				t.Fatal(err)
			}
		}); n != 0 {
			t.Fatalf("%s: a chunk allocates %v times", c, n)
		}
		var sink countWriter
		sw := newStreamWriter(&sink, s)
		if n := testing.AllocsPerRun(20, func() { sw.Write(buf[:ChunkSize]) }); n != 0 {
			t.Fatalf("%s: streamWriter.Write allocates %v times per chunk", c, n)
		}
		sw.Close()
	}

	a, path := newTestArchive(t, nil)
	mustAdd(t, a, "big", content(1, 40*ChunkSize))
	mustCommit(t, a)
	a = reopen(t, a, path, true)
	defer a.Close()
	m, err := a.Open("big")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := make([]byte, ChunkSize)
	m.Read(p) // the first read takes the pooled buffer
	if n := testing.AllocsPerRun(30, func() {
		if _, err := m.Read(p); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("Member.Read allocates %v times per chunk", n)
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// The HMAC-state shortcut computes HKDF-Expand exactly.
func TestExpanderMatchesHKDF(t *testing.T) {
	// (The spec test compares whole archives with crypto/hkdf; this pins
	// the single function on random keys and nonces.)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100; i++ {
		var prk [32]byte
		var r [16]byte
		for j := range prk {
			prk[j] = byte(rng.Uint32())
		}
		for j := range r {
			r[j] = byte(rng.Uint32())
		}
		var got [32]byte
		newExpander(prk[:]).expand(&got, streamInfo, r[:])
		want := hkdfExpandRef(t, prk[:], streamInfo+string(r[:]))
		if string(got[:]) != string(want) {
			t.Fatalf("expander differs from crypto/hkdf for key %x", prk)
		}
	}
}

func hkdfExpandRef(t *testing.T, prk []byte, info string) []byte {
	k, err := hkdf.Expand(sha256.New, prk, info, 32)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
