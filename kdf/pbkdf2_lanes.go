package kdf

import (
	"cmp"
	"context"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf/internal/lanes"
)

// laneHash maps the PRFs that have lane kernels.
func laneHash(h hashes.Spec) (lanes.Hash, bool) {
	switch h.Name {
	case hashes.SHA512:
		return lanes.SHA512, true
	case hashes.SHA256:
		return lanes.SHA256, true
	case hashes.RIPEMD160:
		return lanes.RIPEMD160, true
	case hashes.BLAKE2s256:
		return lanes.BLAKE2s256, true
	}
	return 0, false
}

// kernelsFor is lanes.Kernels; tests and benchmarks replace it to force
// other kernels, or none (the one-chain-at-a-time path).
var kernelsFor = lanes.Kernels

// laneKernels returns the lane kernels for h on this CPU, nil for none.
func laneKernels(h hashes.Spec) []*lanes.Kernel {
	lh, ok := laneHash(h)
	if !ok {
		return nil
	}
	return kernelsFor(lh)
}

// PBKDF2Path names the code path PBKDF2 with the named PRF takes on this
// CPU, e.g. "AVX-512 ymm, 4 lanes + AVX-512 zmm, 8 lanes" for SHA-512, for
// `cryptvol version` and benchmark reports.
func PBKDF2Path(name string) string {
	h, err := hashes.Lookup(name)
	if err != nil {
		return err.Error()
	}
	if lh, ok := laneHash(h); ok {
		return lanes.Path(lh)
	}
	return "one chain at a time per core"
}

// PBKDF2Plan tells how PBKDF2 (and DeriveMany) with the named PRF would
// run keyLen bytes for salts salts here: on how many goroutines, and for
// PRFs with lane kernels, the time of one iteration on the busiest of
// them in nanoseconds, as measured on this CPU (0 for the other PRFs).
// A caller scheduling several derivations can see from it that with lanes
// one output block costs as much as the few a header key has (one 4-lane
// group computes 1 to 4 SHA-512 blocks in the same time), and that a
// header key often keeps only one core busy.
func PBKDF2Plan(prf string, iterations, keyLen, salts int) (goroutines int, iterNanos float64) {
	h, err := hashes.Lookup(prf)
	if err != nil || keyLen < 1 || salts < 1 || iterations < 1 {
		return 1, 0
	}
	chains := salts * ((keyLen + h.Size - 1) / h.Size)
	workers := 1
	if iterations >= parallelThreshold && chains > 1 {
		workers = min(chains, maxParallel())
	}
	ks := laneKernels(h)
	if ks == nil {
		return workers, 0
	}
	plan := planGroups(chains, ks, workers)
	for _, w := range plan {
		t := 0.0
		for _, k := range w {
			t += k.Cost
		}
		iterNanos = max(iterNanos, t)
	}
	return max(1, len(plan)), iterNanos
}

// group is one kernel call's worth of chains.
type group struct {
	k      *lanes.Kernel
	chains []chain
	st     *lanes.State
}

// deriveLanes computes the chains in lane groups of the kernels ks,
// planned by planGroups over workers goroutines.
func deriveLanes(ctx context.Context, ks []*lanes.Kernel, h hashes.Spec, p prf, password []byte, chains []chain, iterations, workers int) error {
	lh, _ := laneHash(h)
	ipad, opad := hmacPads(h.New, password)
	defer wipeBytes(ipad)
	defer wipeBytes(opad)
	plan := planGroups(len(chains), ks, workers)
	u := make([]byte, p.size())
	defer clear(u)
	var msg []byte
	defer func() { clear(msg) }()
	perWorker := make([][]*group, len(plan))
	next := 0
	for w, kernels := range plan {
		for _, k := range kernels {
			if next == len(chains) {
				break // a plan never gains from an empty group; be safe
			}
			g := &group{k: k, chains: chains[next:min(next+k.Lanes, len(chains))], st: new(lanes.State)}
			defer g.st.Wipe()
			next += len(g.chains)
			for l, ch := range g.chains {
				msg = binary.BigEndian.AppendUint32(append(msg[:0], ch.salt...), ch.index)
				p.mac(u, msg)
				g.st.SetKey(lh, l, ipad, opad)
				g.st.SetU(lh, l, u)
			}
			perWorker[w] = append(perWorker[w], g)
		}
	}
	run := func(groups []*group) error {
		done := ctx.Done()
		for _, g := range groups {
			for left := iterations - 1; left > 0; {
				n := min(left, checkEvery)
				g.k.Run(g.st, 0, n)
				left -= n
				if done != nil {
					select {
					case <-done:
						return ctx.Err()
					default:
					}
				}
			}
			for l, ch := range g.chains {
				g.st.Sum(lh, l, ch.dst)
			}
		}
		return nil
	}
	if len(perWorker) == 1 {
		return run(perWorker[0])
	}
	var wg sync.WaitGroup
	errs := make([]error, len(perWorker))
	for w, groups := range perWorker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[w] = run(groups)
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// planGroups chooses kernel groups covering n chains and spreads them
// over at most workers goroutines: the plan whose busiest goroutine
// finishes first by the kernels' costs, and of those the one that costs
// least CPU time. On the EPYC this was written on, 3 SHA-512 chains (a
// header key) take one 4-lane group, 6 on one core an 8-lane group and
// on two cores two 4-lane groups. Every combination is tried up to
// searchChains chains; beyond, full groups of the kernel cheapest per
// lane take the bulk.
func planGroups(n int, ks []*lanes.Kernel, workers int) [][]*lanes.Kernel {
	const searchChains = 24
	// Enumerate the widest kinds' counts; the narrowest covers the rest.
	byLanes := slices.Clone(ks)
	slices.SortStableFunc(byLanes, func(a, b *lanes.Kernel) int { return cmp.Compare(b.Lanes, a.Lanes) })
	// Longest processing time first: assign the dearest groups first.
	byCost := make([]int, len(byLanes))
	for i := range byCost {
		byCost[i] = i
	}
	slices.SortStableFunc(byCost, func(a, b int) int { return cmp.Compare(byLanes[b].Cost, byLanes[a].Cost) })
	bulk := make([]int, len(byLanes))
	if n > searchChains {
		c := 0
		for i, k := range byLanes {
			if k.Cost/float64(k.Lanes) < byLanes[c].Cost/float64(byLanes[c].Lanes) {
				c = i
			}
		}
		bulk[c] = (n - searchChains) / byLanes[c].Lanes
		n -= bulk[c] * byLanes[c].Lanes
	}
	workers = max(1, workers)
	load := make([]float64, workers)
	counts := make([]int, len(byLanes))
	best := make([]int, len(byLanes))
	bestSpan, bestTotal := -1.0, 0.0
	// lpt spreads the groups counts+bulk over the workers, calling put
	// (if not nil) for each, and returns the busiest load and the total.
	lpt := func(put func(w int, k *lanes.Kernel)) (span, total float64) {
		clear(load)
		for _, i := range byCost {
			k := byLanes[i]
			for range counts[i] + bulk[i] {
				w := 0
				for j := range load {
					if load[j] < load[w] {
						w = j
					}
				}
				load[w] += k.Cost
				total += k.Cost
				if put != nil {
					put(w, k)
				}
			}
		}
		for _, l := range load {
			span = max(span, l)
		}
		return span, total
	}
	var try func(i, left int)
	try = func(i, left int) {
		k := byLanes[i]
		if i == len(byLanes)-1 {
			counts[i] = (left + k.Lanes - 1) / k.Lanes
			span, total := lpt(nil)
			if bestSpan < 0 || span < bestSpan || span == bestSpan && total < bestTotal {
				bestSpan, bestTotal = span, total
				copy(best, counts)
			}
			return
		}
		for c := 0; c*k.Lanes < left+k.Lanes; c++ {
			counts[i] = c
			try(i+1, max(0, left-c*k.Lanes))
		}
	}
	try(0, n)
	copy(counts, best)
	plan := make([][]*lanes.Kernel, workers)
	lpt(func(w int, k *lanes.Kernel) { plan[w] = append(plan[w], k) })
	// Drop idle workers (fewer groups than workers).
	return slices.DeleteFunc(plan, func(ws []*lanes.Kernel) bool { return len(ws) == 0 })
}

// CPUFeatures lists the CPU features PBKDF2's lane kernels use on this
// machine that golang.org/x/sys/cpu does not report ("SHA-NI"), decided
// by the same test that chooses the kernels (GODEBUG masks included), so
// a feature list that includes them names what PBKDF2Path reports.
func CPUFeatures() []string { return lanes.Features() }
