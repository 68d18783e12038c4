package mount

import (
	"sync"
)

// writeBehind lets a FUSE write return as soon as its data is copied,
// while a worker goroutine encrypts and writes it: the kernel sends the
// next request (and copies the next megabyte) while the previous one is
// being encrypted and written, so the two halves of the work run on two
// cores instead of one after the other.
//
// Ordering is kept simple and strict: queued writes are applied one at a
// time in arrival order, and every other operation first waits for the
// writes that arrived before it (barrier), so everything the filesystem
// does is observed in request order. A write's error (disk full, hidden
// volume protection) cannot be returned by the write that caused it; it is
// kept on its handle and returned by the handle's next write, flush
// (close(2)) or fsync, as NFS and writeback caches do.
type writeBehind struct {
	mu       sync.Mutex
	cond     sync.Cond
	ring     [writeBehindDepth]pending // the queue: count entries from head
	head     int
	count    int
	enqueued uint64 // writes accepted so far
	applied  uint64 // writes applied so far
	closed   bool   // no more writes; the worker ends when the queue is empty
	pool     sync.Pool
	// kick starts write-out of the container every kickEvery bytes.
	kick     *kicker
	unkicked int
}

// kickEvery is how much is written between two starts of write-out: large
// enough to make big disk requests, small enough to keep the disk busy.
const kickEvery = 8 << 20

// pending is one accepted write.
type pending struct {
	to  writeTarget
	buf *[]byte
	n   int
	off int64
}

// writeTarget is where a queued write goes, and where its error is kept.
type writeTarget interface {
	WriteAt(p []byte, off int64) (int, error)
	deferError(err error)
}

// writeBehindDepth is how many writes may wait: enough to keep the worker
// busy while the kernel copies the next request, small enough that a
// deferred error is reported promptly.
const writeBehindDepth = 3

func newWriteBehind(k *kicker) *writeBehind {
	w := &writeBehind{kick: k}
	w.cond.L = &w.mu
	w.pool.New = func() any { b := make([]byte, MaxIO); return &b }
	go w.run()
	return w
}

// write queues a copy of p for to.WriteAt(p, off); it waits while the
// queue is full. It returns false, queueing nothing, once closed.
func (w *writeBehind) write(to writeTarget, p []byte, off int64) bool {
	var bp *[]byte
	if len(p) <= MaxIO {
		bp = w.pool.Get().(*[]byte)
	} else {
		b := make([]byte, len(p))
		bp = &b
	}
	n := copy(*bp, p)
	w.mu.Lock()
	for w.count == len(w.ring) && !w.closed {
		w.cond.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		if cap(*bp) == MaxIO {
			w.pool.Put(bp)
		}
		return false
	}
	w.ring[(w.head+w.count)%len(w.ring)] = pending{to: to, buf: bp, n: n, off: off}
	w.count++
	w.enqueued++
	w.cond.Broadcast()
	w.mu.Unlock()
	return true
}

// close applies every accepted write, refuses new ones and ends the
// worker.
func (w *writeBehind) close() {
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	for w.applied < w.enqueued {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

// barrier waits until every write accepted before the call is applied.
func (w *writeBehind) barrier() {
	w.mu.Lock()
	target := w.enqueued
	for w.applied < target {
		w.cond.Wait()
	}
	w.mu.Unlock()
}

func (w *writeBehind) run() {
	w.mu.Lock()
	for {
		for w.count == 0 {
			if w.closed {
				w.mu.Unlock()
				w.kick.close()
				return
			}
			w.cond.Wait()
		}
		p := w.ring[w.head]
		w.mu.Unlock()
		if _, err := p.to.WriteAt((*p.buf)[:p.n], p.off); err != nil {
			p.to.deferError(err)
		}
		if w.unkicked += p.n; w.unkicked >= kickEvery {
			w.unkicked = 0
			w.kick.kick()
		}
		if cap(*p.buf) == MaxIO {
			w.pool.Put(p.buf)
		}
		w.mu.Lock()
		w.ring[w.head] = pending{}
		w.head = (w.head + 1) % len(w.ring)
		w.count--
		w.applied++
		w.cond.Broadcast()
	}
}

// deferredError is the first error of a handle's queued writes.
type deferredError struct {
	mu  sync.Mutex
	err error
}

func (d *deferredError) deferError(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.mu.Unlock()
}

// takeError returns and clears the kept error.
func (d *deferredError) takeError() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	err := d.err
	d.err = nil
	return err
}
