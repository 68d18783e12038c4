package mount

import (
	"os"

	"golang.org/x/sys/unix"
)

// kicker starts the kernel's write-out of the container's dirty pages
// while writes are still coming (sync_file_range(SYNC_FILE_RANGE_WRITE),
// which does not wait for it), so that the disk writes while the next
// megabytes are encrypted and an fsync at the end finds little left to
// do. It runs in its own goroutine: starting write-out can block when the
// device's queue is full, and the writers must not wait for that.
type kicker struct {
	f  *os.File
	ch chan struct{}
}

func newKicker(container string) *kicker {
	if container == "" {
		return nil
	}
	f, err := os.Open(container)
	if err != nil {
		return nil
	}
	k := &kicker{f: f, ch: make(chan struct{}, 1)}
	go func() {
		for range k.ch {
			unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
		}
		f.Close()
	}()
	return k
}

// kick asks for a write-out; kicks while one runs are merged into the next.
func (k *kicker) kick() {
	if k == nil {
		return
	}
	select {
	case k.ch <- struct{}{}:
	default:
	}
}

func (k *kicker) close() {
	if k != nil {
		close(k.ch)
	}
}
