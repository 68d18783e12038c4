package luks

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
)

// TestCommitWithAStaleCopy: a crash inside a commit can leave the primary
// header copy one generation ahead of the secondary. The next commit must
// not then write the primary first: torn, it would leave only the stale
// secondary, older than what the volume already reflects (in a
// re-encryption: the hot-zone checksums of another chunk, which lost data
// in the crash-state explorer). Every crash state of that commit must read
// back at the current generation or the next.
func TestCommitWithAStaleCopy(t *testing.T) {
	p, dev := newImage(t, 2<<20)
	if _, err := Create(context.Background(), dev, CreateOptions{Type: "luks2", DataOffset: 1 << 20, KDF: fastKDF("pbkdf2"), Quick: true}, pw("stale")); err != nil {
		t.Fatal(err)
	}
	h, err := readLUKS2(dev)
	if err != nil {
		t.Fatal(err)
	}
	size := int64(h.bin.Size)
	oldSecondary, err := readAt(dev, size, size)
	if err != nil {
		t.Fatal(err)
	}
	if err := commitLUKS2(dev, h, h.meta, nil, false); err != nil {
		t.Fatal(err)
	}
	current := h.bin.SeqID
	// The crash: the secondary of that commit never landed.
	if _, err := dev.WriteAt(oldSecondary, size); err != nil {
		t.Fatal(err)
	}
	if h, err = readLUKS2(dev); err != nil || h.bin.SeqID != current || h.stale != 2 {
		t.Fatalf("the setup: seq %d stale %d (%v), want %d and the secondary stale", h.bin.SeqID, h.stale, err, current)
	}
	base, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// A commit that changes the metadata (a token here; a new hot zone
	// in a re-encryption): a torn copy is then no copy.
	meta, err := editLUKS2(h, func(raw map[string]any) {
		object(raw, "tokens")["0"] = map[string]any{"type": "test-token", "keyslots": []any{}, "pad": string(bytes.Repeat([]byte("x"), 6000))}
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := crashsim.NewRecorder(dev)
	if err := commitLUKS2(rec, h, meta, nil, false); err != nil {
		t.Fatal(err)
	}
	states := crashsim.States(rec.Ops(), crashsim.Options{Subsets: 8, Torn: 8, Seed: 31})
	for _, s := range states {
		img := &memDevice{b: bytes.Clone(base)}
		if err := s.Apply(img); err != nil {
			t.Fatal(err)
		}
		got, err := readLUKS2(img)
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if got.bin.SeqID < current {
			t.Fatalf("%s: the header went back to generation %d (the current one is %d)", s.Name, got.bin.SeqID, current)
		}
	}
	t.Logf("%d crash states, each at generation %d or %d", len(states), current, current+1)
}
