package reencrypt

import "github.com/cryptvol/cryptvol/volume"

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
	// The first chunk is the largest; when it is the last, or there is
	// none left, fewer buffers do.
	_, size, next := e.chunkAfter(e.done)
	bufs := pipelineDepth
	switch {
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
	for !e.finishedAt(done) {
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
		c.off, c.n, c.next = e.chunkAfter(done)
		c.err = e.prepare(c)
		pl.ready <- c // never blocks: there are no more buffers than room
		if c.err != nil {
			return
		}
		done = c.next
	}
}

// prepare reads the chunk c stands for, takes its protection and turns
// it into the new form.
func (e *engine) prepare(c *prepared) error {
	b := c.data[:c.n]
	c.data, c.prot = b, nil
	switch e.p.Resilience {
	case volume.ResilienceJournal:
		old := c.old[:c.n]
		if err := e.readOld(old, c.off); err != nil {
			return err
		}
		copy(b, old)
		c.prot = old
	default:
		if err := e.readOld(b, c.off); err != nil {
			return err
		}
		if e.p.Resilience == volume.ResilienceChecksum {
			c.prot = e.checksums(b)
		}
	}
	e.transform(b, c.off)
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
