package archive

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
	"github.com/cryptvol/cryptvol/internal/ctxio"
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
// the password or key file stays the same, and so do the file's mode and
// (where the process may set it) owner. Until the rename the old file is
// untouched; the new one is written beside it under a name that says which
// process writes it (see internal/atomicfile), and is removed if anything
// fails, or by the next Open or Compact if the process was killed.
// Readers of the old file (an open Member, a Walk under way) go on reading
// it, except on Windows, which cannot rename over an open file: there the
// old file is closed first and such readers get an error. progress, if
// not nil, is called with the bytes copied so far.
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

	ao := atomicfile.Options{KeepMode: true, NoSync: a.noSync, Leftover: a.leftover}
	if compactTrace != nil {
		ao.Trace = func(step string) {
			compactTrace(map[string]byte{"sync": 's', "rename": 'r', "syncdir": 'd'}[step], 0, nil)
		}
	}
	tf, err := atomicfile.Create(a.path, ao)
	if err != nil {
		return st, err
	}
	defer tf.Discard()
	ok := false
	unlock, err := lockFile(tf.File)
	if err != nil {
		return st, err
	}
	defer func() {
		if !ok {
			unlock()
		}
	}()
	var nf file = tf.File
	if compactTrace != nil {
		nf = tracedFile{nf}
	}
	nb, err := a.writeBase(ctx, nf, a.idx, progress)
	if err != nil {
		return st, err
	}
	if replaceByReopening {
		// Windows: close everything, rename, open again (replace.go).
		a.mu.Lock()
		defer a.mu.Unlock()
		if err := a.reopenReplace(tf, unlock); err != nil {
			return st, err
		}
		ok = true
	} else {
		err := tf.Rename()
		if !tf.Renamed() {
			return st, err
		}
		ok = true
		tmp := tf.Release()

		// Switch to the new file; the old one stays open for Members
		// reading it.
		a.mu.Lock()
		defer a.mu.Unlock()
		if err != nil {
			// The rename happened; what remains is its durability.
			a.broken = fmt.Errorf("%w: compacted, but syncing the directory failed: %v", ErrClosed, err)
		}
		if a.unlock != nil {
			a.unlock()
		}
		a.retired = append(a.retired, a.f)
		a.f, a.unlock = tmp, unlock
	}
	a.hdr = nb.hdr
	a.idx = nb.idx
	a.runs = []run{{at: nb.at, segLen: nb.ft.segLen, firstGen: 1, gen: 1}}
	a.last, a.lastAt, a.tail = nb.ft, nb.at, 0
	st.Members = a.idx.live
	st.BytesAfter = a.end()
	return st, nil
}

// compactTrace, set only by the power-cut explorer's test, hears every
// write, truncate and sync to the new file and the steps that make it the
// archive (its sync 's', the rename 'r', the directory's sync 'd'), in
// the order they are done.
var compactTrace func(kind byte, off int64, data []byte)

// tracedFile tells compactTrace of each change to the new file.
type tracedFile struct{ file }

func (t tracedFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := t.file.WriteAt(p, off)
	compactTrace('w', off, append([]byte(nil), p[:n]...))
	return n, err
}

func (t tracedFile) Truncate(n int64) error {
	compactTrace('t', n, nil)
	return t.file.Truncate(n)
}

func (t tracedFile) Sync() error {
	if err := t.file.Sync(); err != nil {
		return err
	}
	compactTrace('s', 0, nil)
	return nil
}

// newBase is a file writeBase wrote: its header, index and one commit.
type newBase struct {
	hdr header
	idx *index
	ft  footer
	at  int64
}

// writeBase writes to f a new archive file holding the live members of idx,
// whose records it reads from a's file: the header with a new file ID,
// every record encrypted again, and one commit whose segment is a base. It
// syncs f unless a is NoSync.
func (a *Archive) writeBase(ctx context.Context, f file, idx *index, progress func(done, total int64)) (*newBase, error) {
	na := &Archive{f: f, noSync: a.noSync, hdr: a.hdr, k: a.k, idx: newIndex()}
	rand.Read(na.hdr.fileID[:])
	if _, err := f.WriteAt(na.hdr.marshal(a.k), 0); err != nil {
		return nil, err
	}
	pos := int64(headerSize)
	bw := bufio.NewWriterSize(countingWriter{f, &pos}, 1<<20)
	var total, done int64
	for i := range idx.ents {
		if e := &idx.ents[i]; !e.dead && e.kind == opFile {
			total += e.size
		}
	}
	for i := range idx.ents {
		e := idx.ents[i]
		if e.dead {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := op{kind: e.kind, gen: 1, name: idx.nameOf(&e), mode: e.mode, mtime: e.mtime}
		if e.kind == opFile {
			in, err := newStream(a.hdr.cipher, &a.k.record, &e.nonce, &a.hdr.fileID, e.offset)
			if err != nil {
				return nil, err
			}
			sr := newStreamReader(a.f, in, e.offset, e.size)
			o.offset = pos + int64(bw.Buffered())
			rand.Read(o.nonce[:])
			out, err := newStream(a.hdr.cipher, &a.k.record, &o.nonce, &na.hdr.fileID, o.offset)
			if err != nil {
				return nil, err
			}
			sw := newStreamWriter(bw, out)
			_, err = io.Copy(sw, ctxio.Reader(ctx, sr))
			sr.close()
			n, cerr := sw.Close()
			if err == nil {
				err = cerr
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			if err != nil {
				return nil, memberError(string(o.name), err)
			}
			if n != e.size {
				return nil, fmt.Errorf("%w: %s: record holds %d bytes, the index says %d", ErrDamaged, o.name, n, e.size)
			}
			o.size = n
			done += n
			if progress != nil {
				progress(done, total)
			}
		}
		if err := na.idx.put(&o); err != nil {
			return nil, err
		}
	}
	ft := footer{gen: 1, firstGen: 1, segOff: pos + int64(bw.Buffered()), live: uint64(na.idx.live)}
	rand.Read(ft.segNonce[:])
	s, err := newStream(a.hdr.cipher, &a.k.index, &ft.segNonce, &na.hdr.fileID, ft.segOff)
	if err != nil {
		return nil, err
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
		return nil, err
	}
	ft.segLen = n
	at := pos
	if _, err := f.WriteAt(ft.marshal(a.k, &na.hdr.fileID, at), at); err != nil {
		return nil, err
	}
	if !a.noSync {
		if err := f.Sync(); err != nil {
			return nil, err
		}
	}
	return &newBase{hdr: na.hdr, idx: na.idx, ft: ft, at: at}, nil
}
