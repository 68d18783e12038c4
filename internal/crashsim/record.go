// Package crashsim (test only) explores the states a power cut can leave
// a container in: Recorder logs the writes and flushes a command sends to
// its device, and States builds, from that log, the images a disk that
// persists only flushed writes for sure (and any subset of the rest, in
// any order, with sector writes atomic and larger ones torn at sector
// boundaries) may hold after the cut.
package crashsim

import (
	"fmt"
	"io"
	"sync"
)

// SectorSize is the unit a disk writes atomically.
const SectorSize = 512

// Device is what volume.Device is; repeated here so that this package
// sits below everything it tests.
type Device interface {
	io.ReaderAt
	io.WriterAt
	Size() int64
	Sync() error
}

// Op is one logged request: a write of Data at Off, or a flush.
type Op struct {
	Off   int64
	Data  []byte
	Flush bool
}

// Recorder is a Device that passes everything to the device under it and
// logs each write and flush.
type Recorder struct {
	Device
	// DropFlush, when set, is asked for every flush (numbered from 0);
	// true makes the Recorder neither log nor pass it on, as if the
	// writer had never asked for it. Tests use it to show that the
	// explorer catches a missing flush.
	DropFlush func(n int) bool

	mu      sync.Mutex
	ops     []Op
	flushes int
}

// NewRecorder wraps d.
func NewRecorder(d Device) *Recorder { return &Recorder{Device: d} }

// WriteAt logs a copy of p and writes it.
func (r *Recorder) WriteAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.ops = append(r.ops, Op{Off: off, Data: append([]byte(nil), p...)})
	r.mu.Unlock()
	return r.Device.WriteAt(p, off)
}

// Sync logs a flush and passes it on (unless DropFlush says otherwise).
func (r *Recorder) Sync() error {
	r.mu.Lock()
	n := r.flushes
	r.flushes++
	drop := r.DropFlush != nil && r.DropFlush(n)
	if !drop {
		r.ops = append(r.ops, Op{Flush: true})
	}
	r.mu.Unlock()
	if drop {
		return nil
	}
	return r.Device.Sync()
}

// Ops returns the log so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Flushes is how many flushes the writer asked for (dropped ones too).
func (r *Recorder) Flushes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flushes
}

// Writes counts the logged writes.
func Writes(ops []Op) int {
	n := 0
	for _, o := range ops {
		if !o.Flush {
			n++
		}
	}
	return n
}

// KillStates are the states a kill -9 of the recording process leaves:
// the page cache keeps every write made before the kill, in order, and
// nothing after it, whatever the flushes. State k holds the first k
// writes, for k from 0 to all of them.
func KillStates(ops []Op) []State {
	var writes []Op
	for _, o := range ops {
		if !o.Flush {
			writes = append(writes, o)
		}
	}
	states := make([]State, 0, len(writes)+1)
	for k := 0; k <= len(writes); k++ {
		states = append(states, State{Name: fmt.Sprintf("killed before write %d of %d", k+1, len(writes)), Writes: writes[:k]})
	}
	return states
}
