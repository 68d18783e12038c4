package sector

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// minBytesPerWorker is the smallest share of a run worth handing to another
// goroutine: below it the hand-off costs more than it saves.
const minBytesPerWorker = 64 << 10

// parallel splits large runs across goroutines.
type parallel struct {
	m       Mode
	workers int
}

// Parallel returns a Mode that splits each run of sectors into up to
// workers contiguous shares (runtime.GOMAXPROCS(0) if workers <= 0) and
// processes them at once on the package's shared worker pool while the
// caller waits. Runs shorter than 64 KiB per share stay on the caller's
// goroutine. m must be safe for concurrent use on disjoint
// buffers, as every Mode of this package is.
//
// Parallel needs no Close: pool goroutines are started on demand and exit
// after a short idle period, so an idle Parallel costs nothing, and a call
// in steady state makes no allocation.
func Parallel(m Mode, workers int) Mode {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers == 1 {
		return m
	}
	return &parallel{m: m, workers: workers}
}

// SectorSize implements Mode.
func (p *parallel) SectorSize() int { return p.m.SectorSize() }

// Encrypt implements Mode.
func (p *parallel) Encrypt(dst, src []byte, first uint64) { p.run(dst, src, first, false) }

// Decrypt implements Mode.
func (p *parallel) Decrypt(dst, src []byte, first uint64) { p.run(dst, src, first, true) }

// call tracks the shares of one run handed to workers.
type call struct {
	wg   sync.WaitGroup // for a caller that has to block
	left atomic.Int32   // for a caller that polls
}

func (c *call) add() {
	c.left.Add(1)
	c.wg.Add(1)
}

func (c *call) done() {
	c.left.Add(-1)
	c.wg.Done()
}

// wait returns when every share is done. It first polls for up to
// spinFor: a worker that started with the caller finishes about when the
// caller's own share does, and a caller that parks pays a wake-up. On a
// busy machine it blocks at once instead (see spinner): its polling would
// take the processor the worker it waits for needs.
func (c *call) wait() {
	sp, ok := startSpin()
	for ok && c.left.Load() != 0 {
		ok = sp.more()
	}
	c.wg.Wait()
}

var calls = sync.Pool{New: func() any { return new(call) }}

func (p *parallel) run(dst, src []byte, first uint64, decrypt bool) {
	ss := p.m.SectorSize()
	checkRun(dst, src, ss)
	shares := min(p.workers, len(src)/minBytesPerWorker)
	if shares <= 1 {
		task{m: p.m, dst: dst, src: src, first: first, decrypt: decrypt}.run()
		return
	}
	sectors := len(src) / ss
	per, extra := sectors/shares, sectors%shares
	c := calls.Get().(*call)
	share := func(i int) task {
		at := i*per + min(i, extra)
		n := per
		if i < extra {
			n++
		}
		return task{
			m:       p.m,
			dst:     dst[at*ss : (at+n)*ss],
			src:     src[at*ss : (at+n)*ss],
			first:   first + uint64(at),
			decrypt: decrypt,
			call:    c,
		}
	}
	// Shares 1.. go to pool workers. When every one of them reached a
	// spinning worker, that is, one already running on another processor,
	// this goroutine runs share 0 itself and polls for the rest.
	//
	// Otherwise share 0 goes to a worker too and this goroutine blocks.
	// Had it kept share 0, the last worker it woke would sit in its
	// processor's "run next" slot, which other processors steal from only
	// reluctantly: in measurements the shares often ran one after the
	// other, and 1 MiB runs scaled 1.44× instead of about 1.8× on 2 cores.
	// Blocking hands this processor to that worker at once, and the
	// workers woken before it are ordinary queued goroutines that idle
	// processors steal straight away.
	allHot := true
	for i := 1; i < shares; i++ {
		t := share(i)
		c.add()
		ok, hot := workers.submit(t)
		if !ok {
			// Pool at its limit: do this share here.
			c.done()
			t.run()
		}
		allHot = allHot && hot
	}
	t := share(0)
	if allHot {
		t.run()
		c.wait()
	} else {
		c.add()
		if ok, _ := workers.submit(t); !ok {
			c.done()
			t.run()
		}
		c.wg.Wait()
	}
	calls.Put(c)
}

// task is one share of a run.
type task struct {
	m       Mode
	dst     []byte
	src     []byte
	first   uint64
	decrypt bool
	call    *call
}

func (t task) run() {
	if t.decrypt {
		t.m.Decrypt(t.dst, t.src, t.first)
	} else {
		t.m.Encrypt(t.dst, t.src, t.first)
	}
}
