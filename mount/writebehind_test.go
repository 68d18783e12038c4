package mount

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// memTarget is a writeTarget over memory that can be told to fail and to
// be slow, recording the order of writes.
type memTarget struct {
	mu    sync.Mutex
	data  []byte
	order []int64
	fail  error
	slow  time.Duration
	deferredError
}

func (m *memTarget) WriteAt(p []byte, off int64) (int, error) {
	if m.slow > 0 {
		time.Sleep(m.slow)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, m.fail
	}
	if need := int(off) + len(p); need > len(m.data) {
		m.data = append(m.data, make([]byte, need-len(m.data))...)
	}
	copy(m.data[off:], p)
	m.order = append(m.order, off)
	return len(p), nil
}

func (m *memTarget) snapshot() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]byte(nil), m.data...)
}

// TestWriteBehindOrderAndBarrier queues overlapping writes of random
// sizes, and checks after barriers that the target holds what applying
// them in order gives, although the caller's buffers are reused at once.
func TestWriteBehindOrderAndBarrier(t *testing.T) {
	w := newWriteBehind(nil)
	defer w.close()
	target := &memTarget{slow: 50 * time.Microsecond}
	model := make([]byte, 3<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, MaxIO+5000) // larger than a pool buffer, sometimes
	for i := 0; i < 300; i++ {
		n := 1 + rng.IntN(len(buf))
		off := rng.Int64N(int64(len(model) - n))
		for j := range buf[:n] {
			buf[j] = byte(rng.Uint32())
		}
		copy(model[off:], buf[:n])
		if !w.write(target, buf[:n], off) {
			t.Fatal("write refused before close")
		}
		// The caller may reuse its buffer at once.
		for j := range buf[:n] {
			buf[j] = 0xEE
		}
		if i%37 == 0 {
			w.barrier()
			got := target.snapshot()
			if !bytes.Equal(got, model[:len(got)]) {
				t.Fatalf("after barrier %d: target differs from in-order application", i)
			}
		}
	}
	w.barrier()
	got := target.snapshot()
	if !bytes.Equal(got, model[:len(got)]) {
		t.Fatal("final content differs from in-order application")
	}
}

// TestWriteBehindDeferredError checks that a failed write's error waits in
// its target and that close applies everything queued, then refuses more.
func TestWriteBehindDeferredError(t *testing.T) {
	w := newWriteBehind(nil)
	bad := &memTarget{fail: errors.New("disk full")}
	good := &memTarget{}
	w.write(bad, []byte("x"), 0)
	w.write(good, []byte("hello"), 0)
	w.barrier()
	if err := bad.takeError(); err == nil || err.Error() != "disk full" {
		t.Fatalf("deferred error: %v", err)
	}
	if err := bad.takeError(); err != nil {
		t.Fatalf("error not cleared: %v", err)
	}
	if good.takeError() != nil || string(good.snapshot()) != "hello" {
		t.Fatal("the good target was affected")
	}
	good.slow = 2 * time.Millisecond
	for i := 0; i < 5; i++ {
		w.write(good, []byte{byte('a' + i)}, int64(i))
	}
	w.close() // must apply the five queued writes first
	if got := string(good.snapshot()); got != "abcde" {
		t.Fatalf("after close: %q, want every queued write applied", got)
	}
	if w.write(good, []byte("z"), 0) {
		t.Fatal("write accepted after close")
	}
}

// TestWriteBehindNoAllocs checks the steady state of queueing a 1 MiB
// write and applying it allocates nothing (pooled buffers).
func TestWriteBehindNoAllocs(t *testing.T) {
	w := newWriteBehind(nil)
	defer w.close()
	target := &memTarget{data: make([]byte, MaxIO)}
	p := make([]byte, MaxIO)
	target.order = make([]int64, 0, 1000)
	allocs := testing.AllocsPerRun(100, func() {
		w.write(target, p, 0)
		w.barrier()
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per queued write", allocs)
	}
}

// BenchmarkWriteBehind measures queueing plus applying 1 MiB writes to
// memory: the cost the queue adds on top of the filesystem's own.
func BenchmarkWriteBehind(b *testing.B) {
	w := newWriteBehind(nil)
	defer w.close()
	target := &nullTarget{}
	p := make([]byte, MaxIO)
	b.SetBytes(MaxIO)
	b.ReportAllocs()
	for b.Loop() {
		w.write(target, p, 0)
	}
	w.barrier()
}

type nullTarget struct{ deferredError }

func (*nullTarget) WriteAt(p []byte, off int64) (int, error) { return len(p), nil }
