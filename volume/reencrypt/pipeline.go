package reencrypt

import (
	"errors"
	"hash"
	"runtime"
	"sync"

	"github.com/cryptvol/cryptvol/volume"
)

// A chunk's work is of two kinds: reading it, hashing it and transforming
// it keeps the processors busy; committing its protection, writing it and
// syncing waits for the disk. The pipeline does the first kind for the
// next chunk while the engine does the second for the current one, so a
// run takes about the longer of the two rather than their sum.
//
// Nothing of this changes what reaches the disk, nor in which order:
// only the engine's goroutine writes and syncs, chunk after chunk, as
// before. Reading a chunk before the previous one is written reads the
// same bytes as reading it after: no write of a chunk may touch where a
// chunk not yet done keeps its old form, or a crash right after that
// write would lose it (a data shift moves by at least a chunk for that
// reason).

// pipelineDepth is how many chunks are in flight: one being committed,
// one being prepared.
const pipelineDepth = 2

// prepared is a chunk read and transformed, ready to be committed.
type prepared struct {
	off, n int64
	next   int64  // Plan.Done once it is done
	data   []byte // its new form, to write
	prot   []byte // its protection (see volume.ReencryptHot)
	old    []byte // journal: its old form, the protection
	err    error  // reading it failed: the run ends there
}

// pipeline prepares the chunks of a run in order on a goroutine of its
// own, in a fixed set of buffers.
type pipeline struct {
	ready chan *prepared // prepared, in chunk order
	free  chan *prepared // buffers to prepare the next chunk in
	quit  chan struct{}
	done  chan struct{} // closed when the goroutine has returned
	all   []*prepared
}

// startPipeline starts preparing the chunks after e.done.
func (e *engine) startPipeline() *pipeline {
	pl := &pipeline{
		ready: make(chan *prepared, pipelineDepth),
		free:  make(chan *prepared, pipelineDepth),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	// No chunk is larger than what is left; when the first is the last,
	// or there is none left, fewer buffers do.
	_, size, _ := e.chunkAfter(e.done, e.chunkSize)
	bufs := pipelineDepth
	switch _, _, next := e.chunkAfter(e.done, e.firstChunk); {
	case e.finished():
		bufs = 0
	case e.finishedAt(next):
		bufs = 1
	}
	for range bufs {
		c := &prepared{data: make([]byte, size)}
		if e.p.Resilience == volume.ResilienceJournal {
			c.old = make([]byte, size)
		}
		pl.all = append(pl.all, c)
		pl.free <- c
	}
	go e.prepareAll(pl, e.done)
	return pl
}

// prepareAll prepares the chunks after done, one in each free buffer,
// until the last or a read fails, or the pipeline is stopped.
func (e *engine) prepareAll(pl *pipeline, done int64) {
	defer close(pl.done)
	for size := e.firstChunk; !e.finishedAt(done); size = min(2*size, e.chunkSize) {
		var c *prepared
		select {
		case <-pl.quit:
			return
		case c = <-pl.free:
		}
		select {
		case <-pl.quit:
			return
		default:
		}
		c.off, c.n, c.next = e.chunkAfter(done, size)
		c.err = e.prepare(c)
		pl.ready <- c // never blocks: there are no more buffers than room
		if c.err != nil {
			return
		}
		done = c.next
	}
}

// prepare reads the chunk c stands for, takes its protection and turns
// it into the new form, on all cores: each takes a share of the chunk and
// reads, hashes and transforms it piece by piece, so each piece is hashed
// and re-encrypted while it is in the processor's cache.
func (e *engine) prepare(c *prepared) error {
	c.data = c.data[:c.n]
	c.prot = nil
	switch e.p.Resilience {
	case volume.ResilienceJournal:
		c.prot = c.old[:c.n]
	case volume.ResilienceChecksum:
		blocks := (c.n + int64(e.p.BlockSize) - 1) / int64(e.p.BlockSize)
		c.prot = make([]byte, blocks*int64(e.p.SumSize))
	}
	shares := e.shares(c.n)
	errs := make([]error, len(shares)-1)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.prepareShare(c, shares[i], shares[i+1])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// preparePiece is how much of a share is hashed and transformed at a
// time: well inside a core's cache.
const preparePiece = 256 << 10

// shares splits a chunk of n bytes into one share per core, at
// boundaries every mode and checksum block of the chunk allows; it
// returns the boundaries, 0 and n included.
func (e *engine) shares(n int64) []int64 {
	unit := int64(max(512, e.p.Old.SectorSize, e.p.New.SectorSize, e.p.BlockSize))
	per := (n/int64(runtime.GOMAXPROCS(0)) + unit - 1) / unit * unit
	per = max(per, min(preparePiece, n))
	at := []int64{0}
	for lo := per; lo < n; lo += per {
		at = append(at, lo)
	}
	return append(at, n)
}

// prepareShare reads, protects and transforms bytes [lo, hi) of c.
func (e *engine) prepareShare(c *prepared, lo, hi int64) error {
	b := c.data[lo:hi]
	if e.p.Resilience == volume.ResilienceJournal {
		if err := e.readOld(c.prot[lo:hi], c.off+lo); err != nil {
			return err
		}
		copy(b, c.prot[lo:hi])
	} else if err := e.readOld(b, c.off+lo); err != nil {
		return err
	}
	var h hash.Hash
	var sum []byte
	if e.p.Resilience == volume.ResilienceChecksum {
		h, sum = e.hash.New(), make([]byte, 0, e.hash.Size)
	}
	bs, ss := int64(e.p.BlockSize), int64(e.p.SumSize)
	for p := lo; p < hi; p += preparePiece {
		q := min(p+preparePiece, hi)
		if h != nil {
			for blk := p; blk < q; blk += bs {
				sum = blockSum(h, c.data[blk:min(blk+bs, hi)], sum)
				copy(c.prot[blk/bs*ss:], sum[:ss])
			}
		}
		transformWith(e.p.Old.Mode, e.p.New.Mode, e.p, c.data[p:q], c.off+p)
	}
	return nil
}

// next is the next chunk, in order, once it is prepared.
func (pl *pipeline) next() *prepared { return <-pl.ready }

// recycle hands a committed chunk's buffers back for the next one.
func (pl *pipeline) recycle(c *prepared) {
	c.data = c.data[:cap(c.data)]
	pl.free <- c
}

// stop ends the preparing goroutine, waits for it (it reads the device,
// which the caller closes after Run) and wipes the buffers.
func (pl *pipeline) stop() {
	close(pl.quit)
	<-pl.done
	for _, c := range pl.all {
		clear(c.data[:cap(c.data)])
		clear(c.old)
	}
}
