package ctxio

import (
	"context"
	"io"
)

// CopyAhead is Copy for large files: the next MiB is read from src
// while the last one is written (encrypted and stored), so that reading
// the source does not add to the time of writing the volume
// (BenchmarkPutLargeFile in cmd/cryptvol). It stops as Copy does.
func CopyAhead(ctx context.Context, dst io.Writer, src io.Reader) (int64, error) {
	pair := [2]*[]byte{bufs.Get().(*[]byte), bufs.Get().(*[]byte)}
	defer func() { bufs.Put(pair[0]); bufs.Put(pair[1]) }()
	r := Reader(ctx, src)
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
	pending := readInto(*pair[0])
	for i := 0; ; i++ {
		got := <-pending
		cur := *pair[i%2]
		last := got.err != nil // the end, or a failure
		if !last {
			pending = readInto(*pair[(i+1)%2])
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
