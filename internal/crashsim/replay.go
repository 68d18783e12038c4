package crashsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"math/rand"
)

// State is one image a power cut may leave: the image before the command
// with Writes applied in order.
type State struct {
	Name   string
	Epoch  int // flushes known done before the cut
	Writes []Op
}

// Apply writes the state's writes onto dst, which holds the image the
// command started from.
func (s State) Apply(dst io.WriterAt) error {
	for _, w := range s.Writes {
		if _, err := dst.WriteAt(w.Data, w.Off); err != nil {
			return err
		}
	}
	return nil
}

// Options bound the exploration.
type Options struct {
	// Subsets is how many random subsets (in random order) of each
	// epoch's writes to add to its prefixes.
	Subsets int
	// Torn is how many torn versions (a random subset of its sectors)
	// of each write larger than a sector to add, after the writes
	// before it in its epoch.
	Torn int
	Seed int64
	// Distinct drops a state whose writes (offsets and bytes, in order)
	// are those of a state listed before it: random subsets of a short
	// epoch repeat, and a long run counts the states it judges, not the
	// draws.
	Distinct bool
}

// Epochs splits a log at its flushes: epoch i holds the writes between
// flush i-1 and flush i. The last epoch holds the writes after the last
// flush (empty when the log ends with one).
func Epochs(ops []Op) [][]Op {
	epochs := [][]Op{nil}
	for _, o := range ops {
		if o.Flush {
			epochs = append(epochs, nil)
			continue
		}
		epochs[len(epochs)-1] = append(epochs[len(epochs)-1], o)
	}
	return epochs
}

// States lists the crash states of a log: for every epoch, the writes of
// the epochs before it in full, then of its own writes every prefix in
// order, o.Subsets random subsets in random order, and o.Torn torn
// versions of each write longer than a sector. The last state of the
// list is the whole log.
func States(ops []Op, o Options) []State {
	rnd := rand.New(rand.NewSource(o.Seed))
	epochs := Epochs(ops)
	var states []State
	var done []Op // the writes of the flushed epochs
	seed := maphash.MakeSeed()
	seen := map[uint64]bool{}
	add := func(s State) {
		if o.Distinct {
			var h maphash.Hash
			h.SetSeed(seed)
			var b [16]byte
			for _, w := range s.Writes {
				binary.LittleEndian.PutUint64(b[:8], uint64(w.Off))
				binary.LittleEndian.PutUint64(b[8:], uint64(len(w.Data)))
				h.Write(b[:])
				h.Write(w.Data)
			}
			k := h.Sum64()
			if seen[k] {
				return
			}
			seen[k] = true
		}
		states = append(states, s)
	}
	for e, ws := range epochs {
		with := func(extra []Op) []Op {
			return append(append([]Op(nil), done...), extra...)
		}
		for p := 0; p <= len(ws); p++ {
			if p == 0 && e > 0 {
				continue // the same as the last prefix of the epoch before
			}
			add(State{Name: fmt.Sprintf("epoch %d, first %d of %d writes", e, p, len(ws)), Epoch: e, Writes: with(ws[:p])})
		}
		if len(ws) > 1 {
			for i := 0; i < o.Subsets; i++ {
				var sub []Op
				for _, j := range rnd.Perm(len(ws)) {
					if rnd.Intn(2) == 0 {
						sub = append(sub, ws[j])
					}
				}
				add(State{Name: fmt.Sprintf("epoch %d, subset %d (%d of %d writes)", e, i, len(sub), len(ws)), Epoch: e, Writes: with(sub)})
			}
		}
		for j, w := range ws {
			n := (len(w.Data) + SectorSize - 1) / SectorSize
			if n < 2 {
				continue
			}
			for i := 0; i < o.Torn; i++ {
				torn := tear(w, rnd)
				add(State{Name: fmt.Sprintf("epoch %d, write %d of %d torn (%d of %d sectors)", e, j+1, len(ws), len(torn), n), Epoch: e, Writes: with(append(append([]Op(nil), ws[:j]...), torn...))})
			}
		}
		done = append(done, ws...)
	}
	// The whole log last, whether or not it ended with a flush.
	if last := states[len(states)-1]; len(last.Writes) != len(done) || !sameOps(last.Writes, done) {
		states = append(states, State{Name: "everything", Epoch: len(epochs) - 1, Writes: done})
	}
	return states
}

// sameOps reports whether a and b are the same writes in the same order.
func sameOps(a, b []Op) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Off != b[i].Off || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

// tear splits w at sector boundaries and keeps a random proper subset of
// its sectors (at least one kept, at least one lost).
func tear(w Op, rnd *rand.Rand) []Op {
	n := (len(w.Data) + SectorSize - 1) / SectorSize
	lost := rnd.Intn(n)
	var out []Op
	for s := 0; s < n; s++ {
		if s != lost && (rnd.Intn(2) == 0 || len(out) == 0) {
			end := min((s+1)*SectorSize, len(w.Data))
			out = append(out, Op{Off: w.Off + int64(s*SectorSize), Data: w.Data[s*SectorSize : end]})
		}
	}
	return out
}
