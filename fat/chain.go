package fat

// run is a stretch of consecutive clusters first..first+count-1 that holds
// clusters pos..pos+count-1 of a file.
type run struct {
	first, count, pos uint32
}

// chain is a file's or directory's cluster chain as runs, so that reading
// a contiguous file costs one device read per run, and finding the cluster
// at an offset is a binary search with no allocation.
type chain struct {
	runs []run
	n    uint32 // clusters in the chain
}

// add appends clusters r.first..r.first+r.count-1 to the end of the chain.
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

// last returns the final cluster, or 0 for an empty chain.
func (ch *chain) last() uint32 {
	if len(ch.runs) == 0 {
		return 0
	}
	r := ch.runs[len(ch.runs)-1]
	return r.first + r.count - 1
}

// first returns the first cluster, or 0 for an empty chain.
func (ch *chain) first() uint32 {
	if len(ch.runs) == 0 {
		return 0
	}
	return ch.runs[0].first
}

// at returns the cluster holding index i of the chain (i < n) and how many
// clusters from there on are consecutive on disk.
func (ch *chain) at(i uint32) (cluster, contiguous uint32) {
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
		ch.runs = ch.runs[:0]
		ch.n = 0
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

// loadChain walks the FAT from start and returns the chain, checking every
// link: a chain that loops, leaves the volume, or runs into a free or bad
// cluster is an ErrCorrupt error. start == 0 is the empty chain.
func (t *fatTable) loadChain(start uint32) (chain, error) {
	var ch chain
	if start == 0 {
		return ch, nil
	}
	if !t.valid(start) {
		return ch, corruptf("chain starts at cluster %d, outside 2..%d", start, t.count-1)
	}
	c := start
	for {
		if ch.n >= t.count-2 {
			return chain{}, corruptf("cluster chain starting at %d loops", start)
		}
		ch.add(run{first: c, count: 1})
		next, end, err := t.follow(c)
		if err != nil {
			return chain{}, err
		}
		if end {
			return ch, nil
		}
		c = next
	}
}
