package whirlpool

import (
	"bytes"
	"hash"
	"testing"

	"github.com/cryptvol/cryptvol/hashes/internal/hashtest"
)

func TestNESSIEVectors(t *testing.T) {
	for _, v := range hashtest.ReadVectors(t, "testdata/nessie.txt") {
		if len(v.Message) > 1<<16 && testing.Short() {
			continue
		}
		if got := Sum(v.Message); !bytes.Equal(got[:], v.Digest) {
			t.Errorf("line %d (len %d): got %x, want %x", v.Line, len(v.Message), got, v.Digest)
		}
		d := New()
		d.Write(v.Message)
		if got := d.Sum(nil); !bytes.Equal(got, v.Digest) {
			t.Errorf("line %d streaming: got %x", v.Line, got)
		}
	}
}

func TestHashContract(t *testing.T) {
	hashtest.CheckStreaming(t, func() hash.Hash { return New() })
}

func TestAgainstBotan(t *testing.T) {
	for _, m := range hashtest.RandomMessages() {
		want := hashtest.Botan(t, "Whirlpool", m)
		if got := Sum(m); !bytes.Equal(got[:], want) {
			t.Fatalf("len %d: got %x, botan %x", len(m), got, want)
		}
	}
}

func TestDigestCopyIsSnapshot(t *testing.T) {
	d := New()
	d.Write([]byte("prefix that is longer than one block of sixty-four bytes, surely"))
	snap := *d
	d.Write([]byte("more"))
	snap.Write([]byte("more"))
	if !bytes.Equal(d.Sum(nil), snap.Sum(nil)) {
		t.Fatal("a copied Digest does not continue like the original")
	}
}

func BenchmarkWhirlpool(b *testing.B) {
	b.Run("64B", func(b *testing.B) { hashtest.BenchHash(b, New(), 64) })
	b.Run("8KiB", func(b *testing.B) { hashtest.BenchHash(b, New(), 8192) })
}

// BenchmarkVsBotan: Whirlpool throughput against botan's on the same
// 16 MiB, CPU time; e.g. -bench VsBotan -benchtime 3x.
func BenchmarkVsBotan(b *testing.B) { hashtest.BenchVsBotan(b, "Whirlpool", New()) }
