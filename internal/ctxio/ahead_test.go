package ctxio

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand"
	"testing"
	"testing/iotest"
)

// TestCopyAhead: CopyAhead copies exactly what Copy copies, whatever
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
			n, err := CopyAhead(context.Background(), &out, r())
			if err != nil || n != int64(size) || !bytes.Equal(out.Bytes(), data) {
				t.Errorf("%d bytes, %s reads: copied %d, %v; equal %v", size, name, n, err, bytes.Equal(out.Bytes(), data))
			}
		}
	}
	data := make([]byte, 3<<20)
	boom := errors.New("boom")
	if n, err := CopyAhead(context.Background(), &failAfter{limit: 1 << 20, err: boom}, bytes.NewReader(data)); !errors.Is(err, boom) || n != 1<<20 {
		t.Errorf("failed write: %d, %v", n, err)
	}
	if _, err := CopyAhead(context.Background(), io.Discard, iotest.TimeoutReader(bytes.NewReader(data))); !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("failed read: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := CopyAhead(ctx, io.Discard, bytes.NewReader(data)); !errors.Is(err, context.Canceled) {
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

// TestCopyStopsWhenCancelled: Copy and Reader stop at the next read once
// the context is cancelled, with its error, after what was read before.
func TestCopyStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	data := bytes.Repeat([]byte("x"), 3<<20)
	r := Reader(ctx, iotest.OneByteReader(bytes.NewReader(data)))
	if n, err := r.Read(make([]byte, 8)); n != 1 || err != nil {
		t.Fatalf("read before the cancel: %d, %v", n, err)
	}
	cancel()
	if _, err := r.Read(make([]byte, 8)); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after the cancel: %v", err)
	}
	if n, err := Copy(ctx, io.Discard, bytes.NewReader(data)); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("Copy of a cancelled context: %d, %v", n, err)
	}
	var out bytes.Buffer
	if n, err := Copy(context.Background(), &out, bytes.NewReader(data)); n != int64(len(data)) || err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("Copy: %d, %v", n, err)
	}
}
