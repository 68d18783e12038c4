package archive

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"
)

// Reading one thumbnail-sized member: one lookup, one read, one AEAD open.
func BenchmarkReadFile(b *testing.B) {
	for _, c := range []Cipher{AES256GCM, XChaCha20Poly1305} {
		b.Run(c.String(), func(b *testing.B) {
			a, path := newTestArchive(b, &CreateOptions{Cipher: c, NoSync: true})
			mustAdd(b, a, "thumb.jpg", content(1, 6500))
			mustCommit(b, a)
			a = reopen(b, a, path, true)
			defer a.Close()
			b.SetBytes(6500)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.ReadFile("thumb.jpg"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Walk over 500 thumbnails: sequential reads, one buffer.
func BenchmarkWalk500(b *testing.B) {
	a, path := newTestArchive(b, nil)
	var total int64
	for i := 0; i < 500; i++ {
		n := 3072 + (i*7919)%7168
		mustAdd(b, a, name(i), content(uint64(i), n))
		total += int64(n)
	}
	mustCommit(b, a)
	a = reopen(b, a, path, true)
	defer a.Close()
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Walk(func(Entry, []byte) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// Streaming a large member through a Member: the per-chunk path.
func BenchmarkMemberRead(b *testing.B) {
	for _, c := range []Cipher{AES256GCM, XChaCha20Poly1305} {
		b.Run(c.String(), func(b *testing.B) {
			const size = 16 << 20
			a, path := newTestArchive(b, &CreateOptions{Cipher: c, NoSync: true})
			mustAdd(b, a, "big", content(1, size))
			mustCommit(b, a)
			a = reopen(b, a, path, true)
			defer a.Close()
			buf := make([]byte, 1<<20)
			b.SetBytes(size)
			for b.Loop() {
				m, err := a.Open("big")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(io.Discard, onlyReader{m}, buf); err != nil {
					b.Fatal(err)
				}
				m.Close()
			}
		})
	}
}

type onlyReader struct{ io.Reader }

// Adding a large member: the per-chunk sealing path (no sync).
func BenchmarkAddLarge(b *testing.B) {
	const size = 16 << 20
	data := content(1, size)
	a, _ := newTestArchive(b, nil)
	defer a.Close()
	b.SetBytes(size)
	for b.Loop() {
		if err := a.Add("big", bytes.NewReader(data), fileInfo(), &AddOptions{Replace: true}); err != nil {
			b.Fatal(err)
		}
		if err := a.Rollback(); err != nil {
			b.Fatal(err)
		}
	}
}

// Appending one thumbnail with a durable commit (two fsyncs) to an open
// archive of 1,000 and of 100,000 members: the cost must not depend on the
// size of the archive. (`cryptvol benchmark archive` compares it with a
// zip in the same run.)
func BenchmarkAppend(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "a.cva")
			a, err := Create(b.Context(), path, testKey, &CreateOptions{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < n; i++ {
				if err := a.Add(name(i), bytes.NewReader(smallContent(i)), fileInfo(), nil); err != nil {
					b.Fatal(err)
				}
			}
			mustCommit(b, a)
			a.Close()
			a, err = Open(b.Context(), path, testKey, nil) // syncing from here on
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			thumb := content(2, 6500)
			i := 0
			b.SetBytes(int64(len(thumb)))
			for b.Loop() {
				mustAdd(b, a, fmt.Sprintf("new/%d", i), thumb)
				mustCommit(b, a)
				i++
			}
		})
	}
}

// Opening an archive: the header, the footer chain and the index.
func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			a, path := newTestArchive(b, nil)
			for i := 0; i < n; i++ {
				if err := a.Add(name(i), bytes.NewReader(smallContent(i)), fileInfo(), nil); err != nil {
					b.Fatal(err)
				}
			}
			mustCommit(b, a)
			a.Close()
			b.ReportAllocs()
			for b.Loop() {
				a, err := Open(b.Context(), path, testKey, &OpenOptions{ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				a.Close()
			}
		})
	}
}
