package exfat

import "github.com/cryptvol/cryptvol/internal/fatcore"

// run and chain are fatcore's: the run list of a file's clusters is the
// same on FAT and exFAT.
type (
	run   = fatcore.Run
	chain = fatcore.Chain
)

// loadChain returns the chain of need clusters starting at start: one run
// for a NoFatChain file, else the FAT followed need links (need < 0: up to
// the end-of-chain mark, for the root directory). It reports whether the
// FAT chain goes on past need (a chain longer than the file). A chain that
// leaves the heap, loops or ends early is an ErrCorrupt error.
func (fs *FS) loadChain(start uint32, need int64, noFatChain bool) (ch chain, long bool, err error) {
	g := fs.g
	if need == 0 {
		return ch, false, nil
	}
	if !g.validCluster(start) {
		return ch, false, corruptf("first cluster %d is outside 2..%d", start, g.clusterCount+1)
	}
	if noFatChain {
		if need < 0 || uint64(start)+uint64(need) > uint64(g.clusterCount)+2 {
			return ch, false, corruptf("contiguous run of %d clusters at %d leaves the heap", need, start)
		}
		ch.Add(run{First: start, Count: uint32(need)})
		return ch, false, nil
	}
	t := fs.fat
	if need > 0 && loops(t, start, need) {
		return chain{}, false, corruptf("cluster chain starting at %d loops", start)
	}
	c := start
	for {
		if ch.N > g.clusterCount {
			return chain{}, false, corruptf("cluster chain starting at %d loops", start)
		}
		ch.Add(run{First: c, Count: 1})
		next := t.get(c)
		if need > 0 && int64(ch.N) == need {
			return ch, next != eocCluster, nil
		}
		if next == eocCluster {
			if need > 0 {
				return chain{}, false, corruptf("cluster chain starting at %d ends after %d clusters, %d needed", start, ch.N, need)
			}
			return ch, false, nil
		}
		if !t.valid(next) {
			return chain{}, false, corruptf("cluster %d of the chain starting at %d links to %#x", c, start, next)
		}
		c = next
	}
}

// loops reports whether the first need clusters of the FAT chain at start
// repeat one, or the chain loops soon after them (Brent's cycle
// detection: no memory, at most 3*need steps).
func loops(t *fatTable, start uint32, need int64) bool {
	power, lam := int64(1), int64(1)
	tortoise, hare := start, t.get(start)
	for steps := int64(1); steps < 3*need+2; steps++ {
		if !t.valid(hare) {
			return false // ends (or breaks, which the walk reports)
		}
		if tortoise == hare {
			return true
		}
		if power == lam {
			tortoise, power, lam = hare, power*2, 0
		}
		hare = t.get(hare)
		lam++
	}
	return false
}
