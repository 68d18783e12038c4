package fat

import "github.com/cryptvol/cryptvol/internal/fatcore"

// run and chain are fatcore's: the run list of a file's clusters is the
// same on FAT and exFAT.
type (
	run   = fatcore.Run
	chain = fatcore.Chain
)

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
		if ch.N >= t.count-2 {
			return chain{}, corruptf("cluster chain starting at %d loops", start)
		}
		ch.Add(run{First: c, Count: 1})
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

// NewCluster takes one free cluster, for a new directory.
func (b *backend) NewCluster() (uint32, error) {
	runs, err := b.fs().allocate(1, 0)
	if err != nil {
		return 0, err
	}
	return runs[0].First, nil
}
