package archive

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"testing"
)

// Random sequences of adds, replacements, removals, commits, rollbacks,
// reopenings and compactions, checked against a map after every step that
// should change what a reader sees. This exercises run merging, tombstones
// in merged runs, bases written from memory and index tidying.
func TestRandomOperationsAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed*31))
			a, path := newTestArchive(t, nil)
			committed := map[string][]byte{}
			pending := map[string][]byte{} // nil value: removal
			names := func() []string {
				var ns []string
				for k := range committed {
					ns = append(ns, k)
				}
				return ns
			}
			nextID := 0
			maxSegments := 0
			for step := 0; step < 700; step++ {
				switch r := rng.IntN(100); {
				case r < 40: // add a new member
					nm := fmt.Sprintf("m/%d", nextID)
					nextID++
					if _, ok := pending[nm]; ok {
						continue
					}
					n := rng.IntN(2000)
					if rng.IntN(50) == 0 {
						n = ChunkSize + rng.IntN(ChunkSize)
					}
					d := content(uint64(step)+seed<<32, n)
					mustAdd(t, a, nm, d)
					pending[nm] = d
				case r < 50: // replace
					ns := names()
					if len(ns) == 0 {
						continue
					}
					nm := ns[rng.IntN(len(ns))]
					if _, ok := pending[nm]; ok {
						continue
					}
					d := content(uint64(step)+seed<<40, rng.IntN(500))
					if err := a.Add(nm, bytes.NewReader(d), fileInfo(), &AddOptions{Replace: true}); err != nil {
						t.Fatal(err)
					}
					pending[nm] = d
				case r < 62: // remove
					ns := names()
					if len(ns) == 0 {
						continue
					}
					nm := ns[rng.IntN(len(ns))]
					if _, ok := pending[nm]; ok {
						continue
					}
					if err := a.Remove(nm); err != nil {
						t.Fatal(err)
					}
					pending[nm] = nil
				case r < 85: // commit
					mustCommit(t, a)
					for k, v := range pending {
						if v == nil {
							delete(committed, k)
						} else {
							committed[k] = v
						}
					}
					pending = map[string][]byte{}
					maxSegments = max(maxSegments, a.Segments())
				case r < 88: // roll back
					if err := a.Rollback(); err != nil {
						t.Fatal(err)
					}
					pending = map[string][]byte{}
				case r < 97: // reopen (discards pending)
					a = reopen(t, a, path, false)
					pending = map[string][]byte{}
					checkContents(t, a, committed)
				default: // compact
					if len(pending) > 0 {
						if _, err := a.Compact(t.Context(), nil); err == nil {
							t.Fatal("Compact with pending changes succeeded")
						}
						continue
					}
					if _, err := a.Compact(t.Context(), nil); err != nil {
						t.Fatal(err)
					}
					checkContents(t, a, committed)
				}
			}
			mustCommit(t, a)
			for k, v := range pending {
				if v == nil {
					delete(committed, k)
				} else {
					committed[k] = v
				}
			}
			checkContents(t, a, committed)
			a = reopen(t, a, path, true)
			checkContents(t, a, committed)
			r, err := a.Verify(t.Context(), nil)
			if err != nil || !r.OK() {
				t.Fatalf("verify: %v %+v", err, r)
			}
			t.Logf("%d members, %d commits, up to %d segments on the chain, %d now", a.Len(), a.Commits(), maxSegments, a.Segments())
			a.Close()
		})
	}
}

// Many single-member commits keep the chain of runs logarithmic.
func TestChainStaysShort(t *testing.T) {
	a, path := newTestArchive(t, nil)
	const commits = 2000
	worst := 0
	for i := 0; i < commits; i++ {
		mustAdd(t, a, name(i), smallContent(i))
		if i%10 == 9 {
			if err := a.Remove(name(i - 5)); err != nil {
				t.Fatal(err)
			}
		}
		mustCommit(t, a)
		worst = max(worst, a.Segments())
	}
	// Runs at least halve in size along the chain: at most about
	// log2(total index bytes / smallest run) of them.
	if worst > 24 {
		t.Fatalf("%d segments on the chain after %d commits", worst, commits)
	}
	a = reopen(t, a, path, true)
	if a.Len() != commits-commits/10 {
		t.Fatalf("Len = %d", a.Len())
	}
	if _, err := a.Stat(name(4)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("removed member: %v", err)
	}
	t.Logf("%d commits: at most %d segments on the chain, %d at the end", commits, worst, a.Segments())
	a.Close()
}
