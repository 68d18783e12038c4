package kdf

import (
	"context"
	"encoding/binary"
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
// least CPU time. For 3 SHA-512 chains that is one 4-lane group; for 9,
// an 8-lane and a 4-lane group on two cores.
func planGroups(n int, ks []*lanes.Kernel, workers int) [][]*lanes.Kernel {
	var best [][]*lanes.Kernel
	bestSpan, bestTotal := 0.0, 0.0
	counts := make([]int, len(ks))
	var try func(i, left int)
	try = func(i, left int) {
		if i == len(ks)-1 {
			// The last kind covers what is left.
			counts[i] = (left + ks[i].Lanes - 1) / ks[i].Lanes
			plan, span, total := assign(ks, counts, workers)
			if best == nil || span < bestSpan || span == bestSpan && total < bestTotal {
				best, bestSpan, bestTotal = plan, span, total
			}
			return
		}
		for c := 0; c*ks[i].Lanes < left+ks[i].Lanes; c++ {
			counts[i] = c
			try(i+1, max(0, left-c*ks[i].Lanes))
		}
	}
	try(0, n)
	return best
}

// assign spreads counts[i] groups of kernel ks[i] over workers, dearest
// first onto the least loaded (longest processing time first), and
// returns the plan, its busiest worker's cost and the total cost.
func assign(ks []*lanes.Kernel, counts []int, workers int) (plan [][]*lanes.Kernel, span, total float64) {
	var groups []*lanes.Kernel
	for i, c := range counts {
		for range c {
			groups = append(groups, ks[i])
		}
	}
	// Dearest first (few kinds: a simple selection order).
	for i := range groups {
		for j := i + 1; j < len(groups); j++ {
			if groups[j].Cost > groups[i].Cost {
				groups[i], groups[j] = groups[j], groups[i]
			}
		}
	}
	workers = max(1, min(workers, len(groups)))
	plan = make([][]*lanes.Kernel, workers)
	load := make([]float64, workers)
	for _, k := range groups {
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		plan[w] = append(plan[w], k)
		load[w] += k.Cost
		total += k.Cost
	}
	for _, l := range load {
		span = max(span, l)
	}
	return plan, span, total
}
