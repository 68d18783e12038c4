package sector

import (
	"sync"
	"sync/atomic"
	"time"
)

// The worker pool behind Parallel is shared by the whole package: goroutines
// are started when a share finds no idle worker, and a worker that stays
// idle for idleTimeout exits, so nothing runs while no one encrypts.
//
// A worker puts itself back on the idle list before it reports its share
// done, so by the time a caller's Wait returns, every worker it used is
// idle again and the next call finds them without starting new goroutines.

const maxPoolWorkers = 256

// idleTimeout is in nanoseconds; tests shorten it.
var idleTimeout atomic.Int64

func init() { idleTimeout.Store(int64(2 * time.Second)) }

type workerPool struct {
	mu    sync.Mutex
	idle  []*worker
	total int
}

type worker struct {
	tasks chan task // capacity 1: whoever pops a worker hands it one task
}

var workers = &workerPool{idle: make([]*worker, 0, maxPoolWorkers)}

// submit hands t to an idle worker, starting one if none is idle. It
// returns false, without blocking, when the pool is at its limit; the
// caller then runs t itself.
func (p *workerPool) submit(t task) bool {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.tasks <- t
		return true
	}
	if p.total >= maxPoolWorkers {
		p.mu.Unlock()
		return false
	}
	p.total++
	p.mu.Unlock()
	w := &worker{tasks: make(chan task, 1)}
	w.tasks <- t
	go w.loop(p)
	return true
}

func (w *worker) loop(p *workerPool) {
	timer := time.NewTimer(time.Duration(idleTimeout.Load()))
	defer timer.Stop()
	for {
		select {
		case t := <-w.tasks:
			t.run()
			p.putIdle(w)
			t.wg.Done()
			timer.Reset(time.Duration(idleTimeout.Load()))
		case <-timer.C:
			if p.retire(w) {
				return
			}
			// Popped by a caller just now: its task is on the way.
		}
	}
}

func (p *workerPool) putIdle(w *worker) {
	p.mu.Lock()
	p.idle = append(p.idle, w)
	p.mu.Unlock()
}

// retire removes an idle w from the pool. It fails if a caller has already
// taken w off the idle list, in which case w must serve that caller.
func (p *workerPool) retire(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, x := range p.idle {
		if x == w {
			last := len(p.idle) - 1
			p.idle[i] = p.idle[last]
			p.idle[last] = nil
			p.idle = p.idle[:last]
			p.total--
			return true
		}
	}
	return false
}
