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
