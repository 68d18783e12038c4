package mount

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
)

// readAhead serves sequential reads of one open file from windows read in
// advance. The kernel asks for a file in 128 KiB pieces; without this,
// each piece would wait for its own read of the container (under the
// filesystem's lock) and then its own decryption, and the disk would idle
// while the CPU works and the other way round. With it, once two reads in
// a row continue each other, a goroutine reads the next window (4 MiB: one
// large read of the container, decrypted on all cores) while the current
// one is handed out.
//
// Windows never serve stale data: gen counts every change to any file (it
// is bumped after each change is applied or queued), a window remembers
// the count from before it was read (after waiting for the queued
// writes), and a window whose count is no longer current is dropped.
type readAhead struct {
	r       io.ReaderAt
	gen     *atomic.Uint64
	barrier func()
	pool    *sync.Pool // of *[]byte of readAheadWindow bytes

	mu      sync.Mutex
	wins    []*window // by offset; at most maxWindows
	lastEnd int64     // where reading has got to
	inRow   int       // reads in a row near the previous ones
}

// maxWindows bounds the memory of one open file: the window being read
// out, the one after it, and one behind for requests the kernel sends out
// of order.
const maxWindows = 3

// window is a stretch of the file read in advance.
type window struct {
	off  int64
	buf  *[]byte
	n    int
	err  error
	gen  uint64
	done chan struct{}
}

// readAheadWindow is the size of one read in advance.
const readAheadWindow = 4 << 20

func newWindowPool() *sync.Pool {
	return &sync.Pool{New: func() any { b := make([]byte, readAheadWindow); return &b }}
}

// covers reports whether w holds [off, off+n), or all of it up to the end
// of the file.
func (w *window) covers(off int64, n int) bool {
	if off < w.off || off > w.off+int64(w.n) {
		return false
	}
	if off+int64(n) <= w.off+int64(w.n) {
		return true
	}
	return errors.Is(w.err, io.EOF) // the window ends where the file does
}

// read fills dest from the windows, or with a direct read when they do not
// hold it, and starts reading ahead when reads are sequential. The
// kernel's read-ahead sends several requests at once, which may arrive a
// little out of order: a read near the previous ones still counts as
// sequential.
func (ra *readAhead) read(dest []byte, off int64) (int, error) {
	ra.mu.Lock()
	defer ra.mu.Unlock()
	current := ra.gen.Load()
	for i, w := range ra.wins {
		if off < w.off || off >= w.off+int64(len(*w.buf)) {
			continue
		}
		<-w.done
		if w.gen != current || (w.err != nil && !errors.Is(w.err, io.EOF)) {
			ra.drop()
			break
		}
		if !w.covers(off, len(dest)) {
			break
		}
		k := 0
		if off < w.off+int64(w.n) {
			k = copy(dest, (*w.buf)[off-w.off:w.n])
		}
		ra.lastEnd = max(ra.lastEnd, off+int64(k))
		if i == len(ra.wins)-1 && !errors.Is(w.err, io.EOF) {
			ra.ahead(w.off + int64(w.n))
		}
		if k < len(dest) {
			return k, io.EOF
		}
		return k, nil
	}
	if near := off >= ra.lastEnd-readAheadWindow && off <= ra.lastEnd+readAheadWindow; near {
		ra.inRow++
	} else {
		ra.inRow = 0
		ra.drop() // random access: reading ahead would be wasted
	}
	k, err := ra.r.ReadAt(dest, off)
	ra.lastEnd = max(ra.lastEnd, off+int64(k))
	if ra.inRow >= 2 && err == nil {
		ra.ahead(ra.lastEnd)
	}
	return k, err
}

// ahead starts reading the window at off, unless one is already there.
func (ra *readAhead) ahead(off int64) {
	for _, w := range ra.wins {
		if w.off+int64(len(*w.buf)) > off {
			return
		}
	}
	if len(ra.wins) == maxWindows {
		ra.release(ra.wins[0])
		ra.wins = append(ra.wins[:0], ra.wins[1:]...)
	}
	w := &window{off: off, buf: ra.pool.Get().(*[]byte), done: make(chan struct{})}
	// The count is taken before waiting for queued writes: a change
	// after it makes the window stale, one before it is in the read.
	w.gen = ra.gen.Load()
	go func() {
		ra.barrier()
		w.n, w.err = ra.r.ReadAt(*w.buf, w.off)
		close(w.done)
	}()
	ra.wins = append(ra.wins, w)
}

// drop forgets the windows (waiting for reads in progress).
func (ra *readAhead) drop() {
	for _, w := range ra.wins {
		ra.release(w)
	}
	ra.wins = ra.wins[:0]
}

func (ra *readAhead) release(w *window) {
	if w == nil {
		return
	}
	<-w.done
	ra.pool.Put(w.buf)
}

// close waits for reads in progress and frees the windows; the file may be
// closed afterwards.
func (ra *readAhead) close() {
	ra.mu.Lock()
	ra.drop()
	ra.mu.Unlock()
}
