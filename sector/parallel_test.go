package sector

import (
	"bytes"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func (p *workerPool) poolSize() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.total
}

// TestParallelEqualsSerial checks byte for byte that splitting a run over
// workers changes nothing, for runs below, at and far above the split
// threshold, uneven sector counts, in place and out of place.
func TestParallelEqualsSerial(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	a, tf := xtsModes(t, rng, 512)
	key := make([]byte, 32)
	fill(rng, key)
	cbc, err := NewCBC(newAES(t, key), IVPlain64, 4096)
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]Mode{"xts": a, "cascade": Cascade(tf, a), "cbc4096": cbc}
	for name, m := range modes {
		ss := m.SectorSize()
		for _, workers := range []int{2, 3, 8, 0} {
			p := Parallel(m, workers)
			for _, size := range []int{ss, minBytesPerWorker - ss, 2 * minBytesPerWorker, 1<<20 + 3*ss, 5 << 20} {
				size -= size % ss
				first := rng.Uint64()
				pt := make([]byte, size)
				fill(rng, pt)
				want := make([]byte, size)
				m.Encrypt(want, pt, first)
				got := make([]byte, size)
				p.Encrypt(got, pt, first)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s workers=%d size=%d: parallel encrypt differs", name, workers, size)
				}
				p.Decrypt(got, got, first)
				if !bytes.Equal(got, pt) {
					t.Fatalf("%s workers=%d size=%d: parallel in-place decrypt differs", name, workers, size)
				}
			}
		}
	}
	if Parallel(a, 1) != a {
		t.Error("Parallel with one worker should be the mode itself")
	}
}

// TestParallelConcurrentCallers has several goroutines share one Parallel
// mode on disjoint buffers (run it with -race).
func TestParallelConcurrentCallers(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	a, _ := xtsModes(t, rng, 512)
	p := Parallel(a, 4)
	const callers, size = 6, 512 << 10
	src := make([]byte, callers*size)
	fill(rng, src)
	want := make([]byte, len(src))
	a.Encrypt(want, src, 1000)
	got := make([]byte, len(src))
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 3; r++ {
				p.Encrypt(got[c*size:(c+1)*size], src[c*size:(c+1)*size], 1000+uint64(c*size/512))
			}
		}()
	}
	wg.Wait()
	if !bytes.Equal(got, want) {
		t.Fatal("concurrent parallel calls corrupted the output")
	}
}

// TestPoolWorkersRetire checks that pool goroutines exit when idle, so an
// unused Parallel costs nothing. It waits for the pool to drain with a
// generous deadline rather than timing anything.
func TestPoolWorkersRetire(t *testing.T) {
	old := idleTimeout.Load()
	idleTimeout.Store(int64(20 * time.Millisecond))
	defer idleTimeout.Store(old)
	rng := rand.New(rand.NewPCG(19, 20))
	a, _ := xtsModes(t, rng, 512)
	buf := make([]byte, 1<<20)
	Parallel(a, 4).Encrypt(buf, buf, 0)
	if workers.poolSize() == 0 {
		t.Fatal("no pool worker was started")
	}
	deadline := time.Now().Add(30 * time.Second)
	for workers.poolSize() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pool workers still alive long after going idle", workers.poolSize())
		}
		// Workers started by earlier tests still hold the old timeout;
		// keep them busy-free and wait.
		time.Sleep(10 * time.Millisecond)
	}
}
