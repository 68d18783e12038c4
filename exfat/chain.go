package exfat

// run is a stretch of consecutive clusters first..first+count-1 that holds
// clusters pos..pos+count-1 of a file.
type run struct {
	first, count, pos uint32
}

// chain is a file's clusters as runs, so that reading a contiguous file
// costs one device read per run and finding the cluster at an offset is a
// binary search with no allocation. A NoFatChain file is a single run.
type chain struct {
	runs []run
	n    uint32
}

func (ch *chain) add(r run) {
	if r.count == 0 {
		return
	}
	if k := len(ch.runs); k > 0 && ch.runs[k-1].first+ch.runs[k-1].count == r.first {
		ch.runs[k-1].count += r.count
	} else {
		ch.runs = append(ch.runs, run{first: r.first, count: r.count, pos: ch.n})
	}
	ch.n += r.count
}

func (ch *chain) first() uint32 {
	if len(ch.runs) == 0 {
		return 0
	}
	return ch.runs[0].first
}

func (ch *chain) last() uint32 {
	if len(ch.runs) == 0 {
		return 0
	}
	r := ch.runs[len(ch.runs)-1]
	return r.first + r.count - 1
}

// contiguous reports whether the chain is one run (or empty): what a
// NoFatChain entry can describe.
func (ch *chain) contiguous() bool { return len(ch.runs) <= 1 }

// at returns the cluster holding index i (< n) and how many clusters from
// there on are consecutive on disk.
func (ch *chain) at(i uint32) (cluster, contig uint32) {
	lo, hi := 0, len(ch.runs)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ch.runs[mid].pos <= i {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	r := ch.runs[lo]
	d := i - r.pos
	return r.first + d, r.count - d
}

// truncate keeps the first n clusters.
func (ch *chain) truncate(n uint32) {
	if n >= ch.n {
		return
	}
	if n == 0 {
		ch.runs, ch.n = ch.runs[:0], 0
		return
	}
	k := len(ch.runs) - 1
	for ch.runs[k].pos >= n {
		k--
	}
	ch.runs[k].count = n - ch.runs[k].pos
	ch.runs = ch.runs[:k+1]
	ch.n = n
}

// clone returns an independent copy.
func (ch chain) clone() chain {
	return chain{runs: append([]run(nil), ch.runs...), n: ch.n}
}

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
		ch.add(run{first: start, count: uint32(need)})
		return ch, false, nil
	}
	t := fs.fat
	if need > 0 && loops(t, start, need) {
		return chain{}, false, corruptf("cluster chain starting at %d loops", start)
	}
	c := start
	for {
		if ch.n > g.clusterCount {
			return chain{}, false, corruptf("cluster chain starting at %d loops", start)
		}
		ch.add(run{first: c, count: 1})
		next := t.get(c)
		if need > 0 && int64(ch.n) == need {
			return ch, next != eocCluster, nil
		}
		if next == eocCluster {
			if need > 0 {
				return chain{}, false, corruptf("cluster chain starting at %d ends after %d clusters, %d needed", start, ch.n, need)
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
