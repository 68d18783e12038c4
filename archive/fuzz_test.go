package archive

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// fuzzArchive makes a small archive with two commits (files, a directory,
// a removal) and returns its bytes.
func fuzzArchive(f *testing.F) []byte {
	a, path := newTestArchive(f, nil)
	mustAdd(f, a, "a.txt", []byte("first member"))
	mustAdd(f, a, "dir/b.bin", content(1, 3000))
	mustCommit(f, a)
	mustAdd(f, a, "dir/c", content(2, 70))
	if err := a.Remove("a.txt"); err != nil {
		f.Fatal(err)
	}
	mustCommit(f, a)
	if err := a.Close(); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzOpen opens damaged, cut and spliced archives (with the right key
// file) and reads everything an accepted one lists. Every byte after the
// header's magic is authenticated, so what this reaches is the plaintext
// framing: the header's fields, the backward search for the newest valid
// footer over a torn tail, the footer chain, chunk boundaries. Nothing may
// panic; Open's errors wrap ErrNotArchive, ErrUnsupported, ErrDamaged or
// ErrWrongKey; what List names, ReadFile returns at its listed size, Walk
// hands over the same bytes, and Verify and Check finish.
func FuzzOpen(f *testing.F) {
	seed := fuzzArchive(f)
	f.Add(seed)
	f.Add(seed[:len(seed)-1])
	f.Add(append(bytes.Clone(seed), "torn tail"...))
	f.Add(seed[:headerSize])
	f.Fuzz(func(t *testing.T, data []byte) {
		a, _, err := openMem(bytes.Clone(data), testKey)
		if err != nil {
			for _, want := range []error{ErrNotArchive, ErrUnsupported, ErrDamaged, ErrWrongKey} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("Open error wraps no sentinel: %v", err)
		}
		defer a.Close()
		got := map[string][]byte{}
		for _, e := range a.List() {
			if e.Mode.IsDir() {
				continue
			}
			b, err := a.ReadFile(e.Name)
			if err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("ReadFile(%q): error wraps no sentinel: %v", e.Name, err)
				}
				continue
			}
			if int64(len(b)) != e.Size {
				t.Fatalf("ReadFile(%q): %d bytes, listed as %d", e.Name, len(b), e.Size)
			}
			got[e.Name] = b
		}
		a.Walk(func(e Entry, data []byte) error {
			if b, ok := got[e.Name]; ok && !bytes.Equal(b, data) {
				t.Fatalf("Walk and ReadFile disagree on %q", e.Name)
			}
			return nil
		})
		a.Verify(context.Background(), nil)
		a.Check(context.Background())
	})
}

// FuzzIndexOps decodes index segment plaintext (what replaySegment sees
// after authenticating a segment: written by the key's holder, but by any
// version of any writer) and applies it to an index. Nothing may panic or
// loop; every operation decoded must re-encode to one that decodes to the
// same fields.
func FuzzIndexOps(f *testing.F) {
	var seg []byte
	for _, o := range []op{
		{kind: opFile, gen: 1, name: []byte("a.txt"), mode: 0o644, mtime: 1700000000, size: 12, offset: headerSize, nonce: [16]byte{1, 2, 3}},
		{kind: opDir, gen: 1, name: []byte("dir"), mode: 0o755, mtime: -5},
		{kind: opFile, gen: 2, name: []byte("dir/" + strings.Repeat("n", 300)), mode: 0o600, size: 1 << 40, offset: 1 << 20},
		{kind: opDelete, gen: 2, name: []byte("a.txt")},
	} {
		seg = appendOp(seg, &o)
	}
	f.Add(seg)
	f.Fuzz(func(t *testing.T, data []byte) {
		or := newOpReader(bytes.NewReader(data), int64(len(data)))
		idx := newIndex()
		var o op
		for n := 0; ; n++ {
			if n > len(data) {
				t.Fatalf("%d operations from %d bytes", n, len(data))
			}
			err := or.next(&o)
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, errBadOp) {
					t.Fatalf("decode error is not errBadOp: %v", err)
				}
				break
			}
			enc := appendOp(nil, &o)
			back := newOpReader(bytes.NewReader(enc), int64(len(enc)))
			var o2 op
			if err := back.next(&o2); err != nil {
				t.Fatalf("re-encoded %+v does not decode: %v", o, err)
			}
			if o2.kind != o.kind || o2.gen != o.gen || !bytes.Equal(o2.name, o.name) || o2.mode != o.mode ||
				o2.mtime != o.mtime || o2.size != o.size || o2.offset != o.offset || o2.nonce != o.nonce {
				t.Fatalf("re-encoding changed the operation:\n%+v\n%+v", o, o2)
			}
			if o.kind == opDelete {
				idx.del(o.name, o.gen, false)
			} else if err := idx.put(&o); err != nil {
				t.Fatal(err)
			}
		}
		idx.tidy()
	})
}
