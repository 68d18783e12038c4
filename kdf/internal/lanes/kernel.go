package lanes

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Kernel is one code path: it advances Lanes consecutive chains of a
// State by n iterations, the lanes it does not use untouched.
type Kernel struct {
	// Name says what it runs on, e.g. "AVX-512 ymm, 4 lanes".
	Name  string
	Hash  Hash
	Lanes int
	// Cost is the time of one iteration of the whole group in
	// nanoseconds, measured on this CPU when Kernels first returns the
	// kernel (a caller plans which groups to fill by it).
	Cost float64
	run  func(s *State, lane, n int)
}

// Run advances the chains in lanes [lane, lane+k.Lanes) of s by n
// iterations (none if n < 1).
func (k *Kernel) Run(s *State, lane, n int) {
	if lane < 0 || lane+k.Lanes > k.Hash.MaxLanes() {
		panic(fmt.Sprintf("lanes: %s from lane %d overruns the state", k.Name, lane))
	}
	if n < 1 {
		return
	}
	k.run(s, lane, n)
}

var (
	generic512 = &Kernel{Name: "generic Go, one chain at a time", Hash: SHA512, Lanes: 1, Cost: 1,
		run: func(s *State, lane, n int) { chains512Generic(s, lane, lane+1, n) }}
	generic256 = &Kernel{Name: "generic Go, one chain at a time", Hash: SHA256, Lanes: 1, Cost: 1,
		run: func(s *State, lane, n int) { chains256Generic(s, lane, lane+1, n) }}
	genericRIPEMD160 = &Kernel{Name: "generic Go, one chain at a time", Hash: RIPEMD160, Lanes: 1, Cost: 1,
		run: func(s *State, lane, n int) { chainsRIPEMD160Generic(s, lane, lane+1, n) }}
	genericBLAKE2s = &Kernel{Name: "generic Go, one chain at a time", Hash: BLAKE2s256, Lanes: 1, Cost: 1,
		run: func(s *State, lane, n int) { chainsBLAKE2sGeneric(s, lane, lane+1, n) }}
	generics = [numHashes]*Kernel{SHA256: generic256, SHA512: generic512, RIPEMD160: genericRIPEMD160, BLAKE2s256: genericBLAKE2s}
)

// chosen holds, per Hash, the kernels dispatch picked, narrowest first.
var (
	chosen     [numHashes][]*Kernel
	chosenOnce [numHashes]sync.Once
)

// Kernels returns the kernels to use for h on this CPU, narrowest first,
// each with its Cost measured here, or nil if lanes are slower here than
// one chain at a time with the standard library's hash (a CPU that
// hashes SHA-2 in hardware). Which of them to fill is the caller's plan:
// which kernel is fastest for a number of chains differs between CPUs
// (the AMD EPYC this was written on runs 4 lanes of ymm in 0.63 of the
// time of 8 lanes of zmm, two SHA-NI chains in 1.2 times one), so the
// first call times each on a few iterations.
func Kernels(h Hash) []*Kernel {
	chosenOnce[h].Do(func() {
		ks := pick(h)
		calibrate(ks)
		chosen[h] = ks
	})
	return chosen[h]
}

// calibrate sets each kernel's Cost to its time for a few iterations of
// a full group: the best of several rounds taken in turn, so that a round
// a busy machine preempted is dropped. It takes well under a millisecond.
func calibrate(ks []*Kernel) {
	const n, rounds = 64, 5
	var s State
	best := make([]time.Duration, len(ks))
	for r := range rounds {
		for i, k := range ks {
			t0 := time.Now()
			k.Run(&s, 0, n)
			if d := time.Since(t0); r == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	for i, k := range ks {
		k.Cost = max(1, float64(best[i].Nanoseconds())/n)
	}
}

// Available returns every kernel for h this CPU can run, the generic one
// included, for tests and benchmarks.
func Available(h Hash) []*Kernel {
	return append(available(h), generics[h])
}

// Path names the code path PBKDF2 with h takes here, for `cryptvol
// version` and benchmark reports.
func Path(h Hash) string {
	ks := Kernels(h)
	if len(ks) == 0 {
		return "scalar, one chain at a time"
	}
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return strings.Join(names, " + ")
}
