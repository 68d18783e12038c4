// Package ctxio is copying that stops when its context is cancelled: put,
// get, archive extraction and compaction copy files that can be
// gigabytes, and an interrupt must stop them inside a file, not after it.
package ctxio

import (
	"context"
	"io"
	"sync"
)

// Reader returns r, stopping at its next Read once ctx is cancelled (with
// ctx's error).
func Reader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

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

// bufs recycles Copy's buffers: put and get copy thousands of small
// files, and a fresh 1 MiB buffer each was most of their time.
var bufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// Copy copies src to dst in 1 MiB steps, stopping at the next step once
// ctx is cancelled (with ctx's error).
func Copy(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	buf := bufs.Get().(*[]byte)
	defer bufs.Put(buf)
	// Hide ReaderFrom/WriterTo so the copy goes through this buffer and
	// this reader, whatever the two sides are.
	return io.CopyBuffer(struct{ io.Writer }{dst}, Reader(ctx, src), *buf)
}
