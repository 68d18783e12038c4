package archive

import (
	"context"
	"io"
	"io/fs"
	"time"
)

// memFile is an in-memory file for tests. With rec set it logs every
// write, truncate and sync, so a crash can be replayed at any point.
type memFile struct {
	data []byte
	log  []fileOp
	rec  bool
}

// fileOp is one logged call: a write (data at off), a truncate (to off),
// or a sync.
type fileOp struct {
	kind byte // 'w', 't', 's'
	off  int64
	data []byte
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(m.data)) {
		return 0, io.EOF
	}
	n := copy(p, m.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if m.rec {
		m.log = append(m.log, fileOp{'w', off, append([]byte(nil), p...)})
	}
	m.data = applyWrite(m.data, off, p)
	return len(p), nil
}

func applyWrite(data []byte, off int64, p []byte) []byte {
	if end := off + int64(len(p)); end > int64(len(data)) {
		data = append(data, make([]byte, end-int64(len(data)))...)
	}
	copy(data[off:], p)
	return data
}

func (m *memFile) Truncate(n int64) error {
	if m.rec {
		m.log = append(m.log, fileOp{kind: 't', off: n})
	}
	m.data = applyTruncate(m.data, n)
	return nil
}

func applyTruncate(data []byte, n int64) []byte {
	if n <= int64(len(data)) {
		return data[:n]
	}
	return append(data, make([]byte, n-int64(len(data)))...)
}

func (m *memFile) Sync() error {
	if m.rec {
		m.log = append(m.log, fileOp{kind: 's'})
	}
	return nil
}

func (m *memFile) Close() error { return nil }

func (m *memFile) Stat() (fs.FileInfo, error) { return memInfo{int64(len(m.data))}, nil }

type memInfo struct{ size int64 }

func (i memInfo) Name() string       { return "mem" }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o600 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// openMem opens an archive held in memory (writable, without a lock).
func openMem(data []byte, cred Credentials) (*Archive, *memFile, error) {
	mf := &memFile{data: data}
	a := &Archive{path: "mem", f: mf}
	if err := a.load(context.Background(), cred, false); err != nil {
		return nil, nil, err
	}
	return a, mf, nil
}
