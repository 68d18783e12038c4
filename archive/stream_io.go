package archive

import (
	"errors"
	"fmt"
	"io"
	"sync"
)

// chunkBufs recycles the full-size chunk buffers of streams.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, 0, ChunkSize+TagSize); return &b }}

// streamWriter seals what is written to it chunk by chunk into w. A chunk
// is sealed only once more data follows it or on Close, so the last chunk
// carries the final flag. It allocates nothing per chunk.
type streamWriter struct {
	w   io.Writer
	s   *streamCrypt
	buf *[]byte
	i   int64 // next chunk number
	n   int64 // plaintext bytes so far
	err error
}

func newStreamWriter(w io.Writer, s *streamCrypt) *streamWriter {
	return &streamWriter{w: w, s: s, buf: chunkBufs.Get().(*[]byte)}
}

func (sw *streamWriter) Write(p []byte) (int, error) {
	if sw.err != nil {
		return 0, sw.err
	}
	if sw.n+int64(len(p)) >= maxStreamPlain {
		sw.err = errors.New("archive: stream too long")
		return 0, sw.err
	}
	total := len(p)
	for len(p) > 0 {
		b := *sw.buf
		if len(b) == ChunkSize {
			if err := sw.flush(false); err != nil {
				return total - len(p), err
			}
			b = *sw.buf
		}
		k := copy(b[len(b):ChunkSize], p)
		*sw.buf = b[:len(b)+k]
		p = p[k:]
		sw.n += int64(k)
	}
	return total, nil
}

func (sw *streamWriter) flush(last bool) error {
	b := *sw.buf
	ct := sw.s.seal(b[:0], b, sw.i, last)
	if _, err := sw.w.Write(ct); err != nil {
		sw.err = err
		return err
	}
	sw.i++
	*sw.buf = b[:0]
	return nil
}

// Close seals the last chunk (empty for an empty stream) and returns the
// plaintext length. The writer cannot be used afterwards.
func (sw *streamWriter) Close() (int64, error) {
	if sw.err == nil {
		sw.flush(true)
	}
	err := sw.err
	sw.release()
	return sw.n, err
}

func (sw *streamWriter) release() {
	if sw.buf != nil {
		*sw.buf = (*sw.buf)[:0]
		chunkBufs.Put(sw.buf)
		sw.buf = nil
	}
	if sw.err == nil {
		sw.err = errClosedStream
	}
}

var errClosedStream = errors.New("archive: stream closed")

// streamReader reads the plaintext of a stream of known length from an
// io.ReaderAt, one chunk (one read and one AEAD open) at a time.
type streamReader struct {
	src   io.ReaderAt
	s     *streamCrypt
	off   int64 // stream start in src
	size  int64 // plaintext length
	n     int64 // chunks
	buf   *[]byte
	small []byte // buffer of a stream shorter than one chunk
	cur   int64  // chunk held in plain, -1 for none
	plain []byte
	pos   int64
}

func newStreamReader(src io.ReaderAt, s *streamCrypt, off, size int64) *streamReader {
	return &streamReader{src: src, s: s, off: off, size: size, n: streamChunks(size), cur: -1}
}

// load reads and authenticates chunk i.
func (r *streamReader) load(i int64) error {
	plen := int64(ChunkSize)
	if i == r.n-1 {
		plen = r.size - i*ChunkSize
	}
	var b []byte
	if r.n == 1 {
		if r.small == nil {
			r.small = make([]byte, plen+TagSize)
		}
		b = r.small
	} else {
		if r.buf == nil {
			r.buf = chunkBufs.Get().(*[]byte)
		}
		b = (*r.buf)[:plen+TagSize]
	}
	at := r.off + i*(ChunkSize+TagSize)
	if k, err := r.src.ReadAt(b, at); k < len(b) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: stream at %d cut short", ErrDamaged, r.off)
		}
		r.cur = -1
		return err
	}
	p, err := r.s.open(b[:0], b, i, i == r.n-1)
	if err != nil {
		r.cur = -1
		return fmt.Errorf("%w: stream at %d: %v", ErrDamaged, r.off, err)
	}
	r.cur, r.plain = i, p
	return nil
}

func (r *streamReader) Read(p []byte) (int, error) {
	if r.pos >= r.size {
		if r.size == 0 && r.cur < 0 {
			// An empty stream still has its one chunk to authenticate.
			if err := r.load(0); err != nil {
				return 0, err
			}
		}
		return 0, io.EOF
	}
	i := r.pos / ChunkSize
	if i != r.cur {
		if err := r.load(i); err != nil {
			return 0, err
		}
	}
	k := copy(p, r.plain[r.pos-i*ChunkSize:])
	r.pos += int64(k)
	return k, nil
}

func (r *streamReader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.size
	default:
		return r.pos, errors.New("archive: invalid whence")
	}
	if offset < 0 {
		return r.pos, errors.New("archive: negative position")
	}
	r.pos = offset
	return offset, nil
}

func (r *streamReader) close() {
	if r.buf != nil {
		*r.buf = (*r.buf)[:0]
		chunkBufs.Put(r.buf)
		r.buf = nil
	}
	r.plain, r.small = nil, nil
}
