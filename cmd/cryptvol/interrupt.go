package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interruptContext is the commands' context: SIGINT (Ctrl-C) or SIGTERM
// cancels it, and the command stops at its next file or chunk, cleans up
// and says what it had done (exit 130). With secondKills, a second signal
// ends the process at once (what is left behind is swept by the next run,
// see internal/atomicfile); the mount daemon keeps catching them, as it
// must unmount first.
func interruptContext(secondKills bool) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		if secondKills {
			signal.Reset(os.Interrupt, syscall.SIGTERM)
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(sigs)
		cancel()
	}
}

// interrupted is the error of a command stopped by a signal: exit 130,
// with what was done.
func interrupted(format string, args ...any) error {
	return withCode(exitCancelled, fmt.Errorf("interrupted: "+format, args...))
}

// ctxReader stops a copy at the next read once ctx is cancelled, so a
// large file is interrupted inside, not after.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// copyBufs recycles copyCtx's buffers: put and get copy thousands of small
// files, and a fresh 1 MiB buffer each was most of their time.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// copyCtx copies src to dst in 1 MiB steps, stopping at the next step once
// ctx is cancelled (with ctx's error).
func copyCtx(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	// Hide ReaderFrom/WriterTo so the copy goes through this buffer and
	// this reader, whatever the two sides are.
	return io.CopyBuffer(struct{ io.Writer }{dst}, ctxReader{ctx, src}, *buf)
}

// copyAhead is copyCtx for large files: the next MiB is read from src
// while the last one is written (encrypted and stored), so that reading
// the source does not add to the time of writing the volume
// (BenchmarkPutLargeFile). It stops as copyCtx does.
func copyAhead(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	bufs := [2]*[]byte{copyBufs.Get().(*[]byte), copyBufs.Get().(*[]byte)}
	defer func() { copyBufs.Put(bufs[0]); copyBufs.Put(bufs[1]) }()
	r := ctxReader{ctx, src}
	type result struct {
		n   int
		err error
	}
	readInto := func(b []byte) <-chan result {
		ch := make(chan result, 1)
		go func() {
			n, err := io.ReadFull(r, b)
			ch <- result{n, err}
		}()
		return ch
	}
	var total int64
	pending := readInto(*bufs[0])
	for i := 0; ; i++ {
		got := <-pending
		cur := *bufs[i%2]
		last := got.err != nil // the end, or a failure
		if !last {
			pending = readInto(*bufs[(i+1)%2])
		}
		if got.n > 0 {
			m, err := dst.Write(cur[:got.n])
			total += int64(m)
			if err == nil && m < got.n {
				err = io.ErrShortWrite
			}
			if err != nil {
				if !last {
					<-pending // its buffer goes back to the pool only once filled
				}
				return total, err
			}
		}
		if last {
			if got.err == io.EOF || got.err == io.ErrUnexpectedEOF {
				return total, nil
			}
			return total, got.err
		}
	}
}
