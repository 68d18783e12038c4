package sector

import (
	"runtime"
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

// A worker that has just finished a share spins for spinFor, polling for
// the next one, before it parks on its channel. Back-to-back runs (a
// benchmark, a large read or write streamed in chunks) then reach a worker
// that is already running: waking a parked one costs tens of microseconds
// in a virtual machine, which on a 5 MiB AES run at 25 GB/s per core is a
// fifth of the work.
//
// Spinning only pays while processors are idle. On a busy machine (other
// processes, or every P of this one busy) the spinning thread takes a
// processor that another thread, often one of the shares it waits for,
// needs: it costs the machine the CPU time it burns (about a fifth more
// per MiB of XTS in measurements beside two busy processes) and can delay
// the very hand-over it polls for. So a spinner watches for that: when
// two of its polls lie more than spinGap apart, its thread was not running
// in between (the kernel preempted it, or Gosched ran other goroutines
// for that long), and spinning stops for everyone for spinBackoff;
// workers then park and callers block at once.
const spinFor = 100 * time.Microsecond

// spinLimit is spinFor in nanoseconds; benchmarks set it to 0 to compare.
var spinLimit atomic.Int64

func init() { spinLimit.Store(int64(spinFor)) }

const (
	spinGap     = 20 * time.Microsecond
	spinBackoff = time.Second
)

// spinOff is the time (UnixNano) until which nobody spins.
var spinOff atomic.Int64

// spinner polls for at most spinFor and gives up as soon as it sees its
// thread descheduled.
type spinner struct {
	last, deadline time.Time
}

// startSpin returns a spinner, or ok=false when spinning is off.
func startSpin() (s spinner, ok bool) {
	now := time.Now()
	if now.UnixNano() < spinOff.Load() {
		return s, false
	}
	return spinner{last: now, deadline: now.Add(time.Duration(spinLimit.Load()))}, true
}

// more reports whether to poll once more (yielding to other goroutines
// first), turning spinning off for a while when the last poll came late.
func (s *spinner) more() bool {
	runtime.Gosched()
	now := time.Now()
	if now.Sub(s.last) > spinGap {
		spinOff.Store(now.Add(spinBackoff).UnixNano())
		return false
	}
	s.last = now
	return now.Before(s.deadline)
}

// Worker states.
const (
	workerParked   int32 = iota // blocked on tasks, or about to be
	workerSpinning              // polling state for a hand-over
	workerHanded                // next holds a task for it
)

type worker struct {
	tasks chan task // capacity 1: whoever pops a parked worker sends it one task
	state atomic.Int32
	// next is written by the caller that popped this worker off the idle
	// list, before it moves state from spinning to handed; the worker
	// reads it only after seeing handed.
	next task
}

var workers = &workerPool{idle: make([]*worker, 0, maxPoolWorkers)}

// submit hands t to an idle worker, starting one if none is idle. It
// returns ok=false, without blocking, when the pool is at its limit (the
// caller then runs t itself), and hot=true when the worker was spinning,
// that is, running on another processor and picking t up at once.
func (p *workerPool) submit(t task) (ok, hot bool) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.next = t
		if w.state.CompareAndSwap(workerSpinning, workerHanded) {
			return true, true
		}
		w.next = task{}
		w.tasks <- t
		return true, false
	}
	if p.total >= maxPoolWorkers {
		p.mu.Unlock()
		return false, false
	}
	p.total++
	p.mu.Unlock()
	w := &worker{tasks: make(chan task, 1)}
	w.tasks <- t
	go w.loop(p)
	return true, false
}

func (w *worker) loop(p *workerPool) {
	timer := time.NewTimer(time.Duration(idleTimeout.Load()))
	defer timer.Stop()
	for {
		var t task
		if w.spin() {
			t, w.next = w.next, task{}
		} else {
			select {
			case t = <-w.tasks:
			case <-timer.C:
				if p.retire(w) {
					return
				}
				// Popped by a caller just now: its task is on the way.
				continue
			}
		}
		t.run()
		// Spinning before going back on the idle list, so the caller
		// that pops it next finds it spinning.
		w.state.Store(workerSpinning)
		p.putIdle(w)
		t.call.done()
		timer.Reset(time.Duration(idleTimeout.Load()))
	}
}

// spin polls for a hand-over for up to spinFor (less, or not at all, on a
// busy machine: see spinner) and reports whether one came; otherwise the
// worker is marked parked and must wait on its channel. A worker that
// never ran a task is parked already and returns at once. Gosched lets
// any other goroutine have this processor meanwhile.
func (w *worker) spin() bool {
	if w.state.Load() == workerParked {
		return false
	}
	sp, ok := startSpin()
	for ok {
		if w.state.Load() == workerHanded {
			return true
		}
		ok = sp.more()
	}
	// Lose the race to a caller, and the task is in next.
	return !w.state.CompareAndSwap(workerSpinning, workerParked)
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
