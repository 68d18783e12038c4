package fatcore

// Run is a stretch of consecutive clusters first..first+count-1 that holds
// clusters pos..pos+count-1 of a file.
type Run struct {
	First, Count, Pos uint32
}

// Chain is a file's or directory's clusters as runs, so that reading a
// contiguous file costs one device read per run and finding the cluster at
// an offset is a binary search with no allocation. Where the links come
// from (a FAT, or exFAT's NoFatChain single run) is each package's affair;
// the runs are the same.
type Chain struct {
	Runs []Run
	N    uint32 // clusters in the chain
}

// Add appends clusters r.First..r.First+r.Count-1 to the end of the
// chain, merging with the last run when they are consecutive.
func (ch *Chain) Add(r Run) {
	if r.Count == 0 {
		return
	}
	if k := len(ch.Runs); k > 0 && ch.Runs[k-1].First+ch.Runs[k-1].Count == r.First {
		ch.Runs[k-1].Count += r.Count
	} else {
		ch.Runs = append(ch.Runs, Run{First: r.First, Count: r.Count, Pos: ch.N})
	}
	ch.N += r.Count
}

// First returns the first cluster, or 0 for an empty chain.
func (ch *Chain) First() uint32 {
	if len(ch.Runs) == 0 {
		return 0
	}
	return ch.Runs[0].First
}

// Last returns the final cluster, or 0 for an empty chain.
func (ch *Chain) Last() uint32 {
	if len(ch.Runs) == 0 {
		return 0
	}
	r := ch.Runs[len(ch.Runs)-1]
	return r.First + r.Count - 1
}

// Contiguous reports whether the chain is one run (or empty): what a
// NoFatChain entry can describe.
func (ch *Chain) Contiguous() bool { return len(ch.Runs) <= 1 }

// At returns the cluster holding index i (< N) and how many clusters from
// there on are consecutive on disk.
func (ch *Chain) At(i uint32) (cluster, contig uint32) {
	lo, hi := 0, len(ch.Runs)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if ch.Runs[mid].Pos <= i {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	r := ch.Runs[lo]
	d := i - r.Pos
	return r.First + d, r.Count - d
}

// Truncate keeps the first n clusters.
func (ch *Chain) Truncate(n uint32) {
	if n >= ch.N {
		return
	}
	if n == 0 {
		ch.Runs, ch.N = ch.Runs[:0], 0
		return
	}
	k := len(ch.Runs) - 1
	for ch.Runs[k].Pos >= n {
		k--
	}
	ch.Runs[k].Count = n - ch.Runs[k].Pos
	ch.Runs = ch.Runs[:k+1]
	ch.N = n
}

// Clone returns an independent copy.
func (ch Chain) Clone() Chain {
	return Chain{Runs: append([]Run(nil), ch.Runs...), N: ch.N}
}

// Pieces splits the bytes off..off+len(p) of the chain's content into
// the stretches that lie contiguous on the device and calls do with each
// part of p and its device offset: a file's read or write is one device
// call per run it touches. clusterSize is the volume's; clusterOffset
// maps a cluster number to its device offset. The chain must be long
// enough.
func (ch *Chain) Pieces(p []byte, off, clusterSize int64, clusterOffset func(uint32) int64, do func(p []byte, devOff int64) error) error {
	for len(p) > 0 {
		c, contig := ch.At(uint32(off / clusterSize))
		within := off % clusterSize
		k := min(int64(contig)*clusterSize-within, int64(len(p)))
		if err := do(p[:k], clusterOffset(c)+within); err != nil {
			return err
		}
		p = p[k:]
		off += k
	}
	return nil
}
