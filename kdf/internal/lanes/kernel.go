package lanes

import (
	"fmt"
	"strings"
)

// Kernel is one code path: it advances Lanes consecutive chains of a
// State by n iterations, the lanes it does not use untouched.
type Kernel struct {
	// Name says what it runs on, e.g. "AVX-512 ymm, 4 lanes".
	Name  string
	Hash  Hash
	Lanes int
	// Cost is the time of one iteration of the whole group relative to
	// the other kernels for the same hash on the same CPU, so callers can
	// plan which groups to fill.
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
)

// chosen holds, per Hash, the kernels dispatch picked at start-up,
// narrowest first; empty where scalar code with the standard library's
// hash is faster than any kernel here.
var chosen [2][]*Kernel

func init() {
	for _, h := range []Hash{SHA256, SHA512} {
		chosen[h] = pick(h)
	}
}

// Kernels returns the kernels to use for h on this CPU, narrowest first
// (a caller fills the widest that its chains fill, the narrowest for the
// rest), or nil if lanes are slower here than one chain at a time with
// the standard library's hash.
func Kernels(h Hash) []*Kernel { return chosen[h] }

// Available returns every kernel for h this CPU can run, the generic one
// included, for tests and benchmarks.
func Available(h Hash) []*Kernel {
	g := generic256
	if h == SHA512 {
		g = generic512
	}
	return append(available(h), g)
}

// Path names the code path PBKDF2 with h takes here, for `cryptvol
// version` and benchmark reports.
func Path(h Hash) string {
	ks := Kernels(h)
	if len(ks) == 0 {
		return "scalar (standard library " + h.String() + ")"
	}
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return strings.Join(names, " + ")
}
