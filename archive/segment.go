package archive

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Index segment plaintext (SPEC.md "Index segments"): a sequence of
// operations, each naming one member.
const (
	opFile   = 1 // a regular file and its record
	opDir    = 2 // a directory (no record)
	opDelete = 3 // the name is no longer in the archive
)

// MaxNameLen is the longest member name, in bytes.
const MaxNameLen = 4096

// op is one decoded operation.
type op struct {
	kind   byte
	gen    uint64
	name   []byte
	mode   uint32
	mtime  int64
	size   int64
	offset int64
	nonce  [16]byte
}

// appendOp encodes o.
func appendOp(b []byte, o *op) []byte {
	b = append(b, o.kind)
	b = binary.AppendUvarint(b, o.gen)
	b = binary.AppendUvarint(b, uint64(len(o.name)))
	b = append(b, o.name...)
	if o.kind == opDelete {
		return b
	}
	b = binary.AppendUvarint(b, uint64(o.mode))
	b = binary.AppendVarint(b, o.mtime)
	if o.kind == opDir {
		return b
	}
	b = binary.AppendUvarint(b, uint64(o.size))
	b = binary.AppendUvarint(b, uint64(o.offset))
	return append(b, o.nonce[:]...)
}

// maxOpLen bounds the encoding of one operation.
const maxOpLen = 1 + 3*binary.MaxVarintLen64 + MaxNameLen + 4*binary.MaxVarintLen64 + 16

// opReader decodes the operations of a segment from its plaintext, straight
// from a buffer (reading a byte at a time through an interface is what
// made opening a large index slow).
type opReader struct {
	r   io.Reader
	buf []byte // undecoded bytes are buf[pos:]
	pos int
	eof bool
	// err is a read error (a chunk that does not authenticate): the
	// operations wholly before it are still decoded, for salvage, and
	// then next returns it.
	err error
}

// newOpReader reads a segment of plaintext length size from r.
func newOpReader(r io.Reader, size int64) *opReader {
	return &opReader{r: r, buf: make([]byte, 0, min(4*ChunkSize, size+maxOpLen))}
}

var errBadOp = errors.New("malformed index operation")

// fill makes at least maxOpLen bytes available unless the input ends.
func (or *opReader) fill() error {
	n := copy(or.buf[:cap(or.buf)], or.buf[or.pos:])
	or.buf, or.pos = or.buf[:n], 0
	for len(or.buf) < cap(or.buf) && !or.eof {
		k, err := or.r.Read(or.buf[len(or.buf):cap(or.buf)])
		or.buf = or.buf[:len(or.buf)+k]
		if err == io.EOF {
			or.eof = true
		} else if err != nil {
			or.err, or.eof = err, true
		}
	}
	return nil
}

// next decodes the next operation into o (o.name is valid until the next
// call); io.EOF at the clean end of the segment.
func (or *opReader) next(o *op) error {
	if len(or.buf)-or.pos < maxOpLen && !or.eof {
		if err := or.fill(); err != nil {
			return err
		}
	}
	b := or.buf[or.pos:]
	if len(b) == 0 {
		if or.err != nil {
			return or.err
		}
		return io.EOF
	}
	if or.err != nil {
		// Only an operation that is whole before the failed read counts.
		if err := or.decode(b, o); err != nil {
			return or.err
		}
		return nil
	}
	return or.decode(b, o)
}

// decode decodes the operation at the start of b, the undecoded bytes.
func (or *opReader) decode(b []byte, o *op) error {
	i := 0
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, false
		}
		i += n
		return v, true
	}
	o.kind = b[0]
	i++
	if o.kind != opFile && o.kind != opDir && o.kind != opDelete {
		return fmt.Errorf("%w: kind %d", errBadOp, o.kind)
	}
	var ok bool
	if o.gen, ok = uv(); !ok {
		return errBadOp
	}
	n, ok := uv()
	if !ok || n < 1 || n > MaxNameLen || uint64(len(b)-i) < n {
		return errBadOp
	}
	o.name = b[i : i+int(n)]
	i += int(n)
	// Every field the kind does not carry is reset, the nonce too: o is
	// reused across operations, and a directory must not keep the nonce
	// of the file decoded before it (found by FuzzIndexOps).
	o.mode, o.mtime, o.size, o.offset, o.nonce = 0, 0, 0, 0, [16]byte{}
	if o.kind != opDelete {
		mode, ok := uv()
		if !ok || mode > 0o7777 {
			return errBadOp
		}
		o.mode = uint32(mode)
		v, k := binary.Varint(b[i:])
		if k <= 0 {
			return errBadOp
		}
		o.mtime = v
		i += k
	}
	if o.kind == opFile {
		size, ok1 := uv()
		off, ok2 := uv()
		if !ok1 || !ok2 || size >= maxStreamPlain || off < headerSize || off >= maxStreamPlain || len(b)-i < 16 {
			return errBadOp
		}
		o.size, o.offset = int64(size), int64(off)
		copy(o.nonce[:], b[i:i+16])
		i += 16
	}
	or.pos += i
	return nil
}
