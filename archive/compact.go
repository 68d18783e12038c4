package archive

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// CompactStats says what Compact did.
type CompactStats struct {
	Members     int
	BytesBefore int64
	BytesAfter  int64
}

// Compact rewrites the live members into a new file and renames it over
// the archive, so removed and replaced members and superseded index
// segments stop taking space. The new file gets a new file ID, so every
// record is encrypted again (records are bound to their file and offset);
// the password or key file stays the same. Until the rename the old file
// is untouched, and a crash leaves at worst a stray temporary file beside
// it. Readers of the old file (an open Member, a Walk under way) go on
// reading it, except on Windows, which cannot rename over an open file:
// there the old file is closed first and such readers get an error.
// progress, if not nil, is called with the bytes copied so far.
func (a *Archive) Compact(ctx context.Context, progress func(done, total int64)) (CompactStats, error) {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	var st CompactStats
	if err := a.usable(); err != nil {
		return st, err
	}
	if a.readOnly {
		return st, ErrReadOnly
	}
	if a.batch != nil && a.batch.ops.live > 0 {
		return st, errors.New("archive: commit or roll back the pending changes before compacting")
	}
	a.discardBatch()
	st.BytesBefore = a.end() + a.tail

	tmp, err := os.CreateTemp(filepath.Dir(a.path), "."+filepath.Base(a.path)+".compact-*")
	if err != nil {
		return st, err
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	unlock, err := lockFile(tmp)
	if err != nil {
		return st, err
	}
	defer func() {
		if !ok {
			unlock()
		}
	}()

	na := &Archive{path: a.path, f: tmp, noSync: a.noSync, hdr: a.hdr, k: a.k, idx: newIndex()}
	rand.Read(na.hdr.fileID[:])
	if _, err := tmp.WriteAt(na.hdr.marshal(a.k), 0); err != nil {
		return st, err
	}
	pos := int64(headerSize)
	bw := bufio.NewWriterSize(countingWriter{tmp, &pos}, 1<<20)
	var total, done int64
	for i := range a.idx.ents {
		if e := &a.idx.ents[i]; !e.dead && e.kind == opFile {
			total += e.size
		}
	}
	for i := range a.idx.ents {
		e := a.idx.ents[i]
		if e.dead {
			continue
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		o := op{kind: e.kind, gen: 1, name: a.idx.nameOf(&e), mode: e.mode, mtime: e.mtime}
		if e.kind == opFile {
			in, err := newStream(a.hdr.cipher, &a.k.record, &e.nonce, &a.hdr.fileID, e.offset)
			if err != nil {
				return st, err
			}
			sr := newStreamReader(a.f, in, e.offset, e.size)
			o.offset = pos + int64(bw.Buffered())
			rand.Read(o.nonce[:])
			out, err := newStream(a.hdr.cipher, &a.k.record, &o.nonce, &na.hdr.fileID, o.offset)
			if err != nil {
				return st, err
			}
			sw := newStreamWriter(bw, out)
			_, err = io.Copy(sw, sr)
			sr.close()
			n, cerr := sw.Close()
			if err == nil {
				err = cerr
			}
			if err != nil {
				return st, memberError(string(o.name), err)
			}
			if n != e.size {
				return st, fmt.Errorf("%w: %s: record holds %d bytes, the index says %d", ErrDamaged, o.name, n, e.size)
			}
			o.size = n
			done += n
			if progress != nil {
				progress(done, total)
			}
		}
		if err := na.idx.put(&o); err != nil {
			return st, err
		}
	}
	ft := footer{gen: 1, firstGen: 1, segOff: pos + int64(bw.Buffered()), live: uint64(na.idx.live)}
	rand.Read(ft.segNonce[:])
	s, err := newStream(a.hdr.cipher, &a.k.index, &ft.segNonce, &na.hdr.fileID, ft.segOff)
	if err != nil {
		return st, err
	}
	sw := newStreamWriter(bw, s)
	err = na.writeRun(sw, 1, true)
	n, cerr := sw.Close()
	if err == nil {
		err = cerr
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return st, err
	}
	ft.segLen = n
	at := pos
	if _, err := tmp.WriteAt(ft.marshal(a.k, &na.hdr.fileID, at), at); err != nil {
		return st, err
	}
	if !a.noSync {
		if err := tmp.Sync(); err != nil {
			return st, err
		}
	}
	if replaceByReopening {
		// Windows: close everything, rename, open again (replace.go).
		a.mu.Lock()
		defer a.mu.Unlock()
		if err := a.reopenReplace(tmp, unlock); err != nil {
			return st, err
		}
		ok = true
	} else {
		if err := os.Rename(tmp.Name(), a.path); err != nil {
			return st, err
		}
		ok = true
		dirErr := syncDir(a.path, a.noSync)

		// Switch to the new file; the old one stays open for Members
		// reading it.
		a.mu.Lock()
		defer a.mu.Unlock()
		if dirErr != nil {
			// The rename happened; what remains is its durability.
			a.broken = fmt.Errorf("%w: compacted, but syncing the directory failed: %v", ErrClosed, dirErr)
		}
		if a.unlock != nil {
			a.unlock()
		}
		a.retired = append(a.retired, a.f)
		a.f, a.unlock = tmp, unlock
	}
	a.hdr = na.hdr
	a.idx = na.idx
	a.runs = []run{{at: at, segLen: ft.segLen, firstGen: 1, gen: 1}}
	a.last, a.lastAt, a.tail = ft, at, 0
	st.Members = a.idx.live
	st.BytesAfter = a.end()
	return st, nil
}
