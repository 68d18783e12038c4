package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"
)

// TestCopyAhead: copyAhead copies exactly what copyCtx copies, whatever
// the sizes and however the reader cuts its reads, and stops on a failed
// write, a failed read and a cancelled context with that error.
func TestCopyAhead(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, size := range []int{0, 1, 1<<20 - 1, 1 << 20, 1<<20 + 1, 5<<20 + 7} {
		data := make([]byte, size)
		rng.Read(data)
		for name, r := range map[string]func() io.Reader{
			"whole": func() io.Reader { return bytes.NewReader(data) },
			"half":  func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
			"eof":   func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		} {
			var out bytes.Buffer
			n, err := copyAhead(context.Background(), &out, r())
			if err != nil || n != int64(size) || !bytes.Equal(out.Bytes(), data) {
				t.Errorf("%d bytes, %s reads: copied %d, %v; equal %v", size, name, n, err, bytes.Equal(out.Bytes(), data))
			}
		}
	}
	data := make([]byte, 3<<20)
	boom := errors.New("boom")
	if n, err := copyAhead(context.Background(), &failAfter{limit: 1 << 20, err: boom}, bytes.NewReader(data)); !errors.Is(err, boom) || n != 1<<20 {
		t.Errorf("failed write: %d, %v", n, err)
	}
	if _, err := copyAhead(context.Background(), io.Discard, iotest.TimeoutReader(bytes.NewReader(data))); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("failed read: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := copyAhead(ctx, io.Discard, bytes.NewReader(data)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// failAfter takes limit bytes, then fails every write with err.
type failAfter struct {
	limit int
	err   error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.limit {
		n := f.limit
		f.limit = 0
		return n, f.err
	}
	f.limit -= len(p)
	return len(p), nil
}
