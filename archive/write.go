package archive

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"
)

// Info is what Add stores about a member besides its contents.
type Info struct {
	// ModTime is kept to the nanosecond.
	ModTime time.Time
	// Mode: its permission bits (and setuid, setgid, sticky) are kept;
	// fs.ModeDir makes a directory member. Other type bits are refused.
	Mode fs.FileMode
}

// AddOptions change what Add does with an existing name.
type AddOptions struct {
	// Replace lets Add supersede a committed member of the same name.
	Replace bool
}

// batch is the uncommitted work since the last commit: records already
// written after the newest commit, and the operations that will name them.
type batch struct {
	pos int64 // where the next record goes
	hwm int64 // the highest offset written, to truncate leftovers
	bw  *bufio.Writer
	// ops holds the pending operations in order, in the same compact form
	// as the index (a million pending adds must fit too): kind opDelete
	// for a removal, dead for an operation superseded within the batch.
	ops *index
}

// op returns pending operation pos as an op.
func (b *batch) op(pos int) op {
	e := &b.ops.ents[pos]
	return op{kind: e.kind, gen: e.gen, name: b.ops.nameOf(e), mode: e.mode, mtime: e.mtime,
		size: e.size, offset: e.offset, nonce: e.nonce}
}

// at is the offset the next byte written to the batch lands at.
func (b *batch) at() int64 { return b.pos + int64(b.bw.Buffered()) }

// countingWriter writes at a file offset and tracks it.
type countingWriter struct {
	f   io.WriterAt
	off *int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.f.WriteAt(p, *w.off)
	*w.off += int64(n)
	return n, err
}

// startBatch truncates a torn tail (which holds nothing committed) and
// prepares to append after the newest commit.
func (a *Archive) startBatch() error {
	if a.readOnly {
		return ErrReadOnly
	}
	if a.batch != nil {
		return nil
	}
	if a.tail != 0 {
		if err := a.f.Truncate(a.end()); err != nil {
			return err
		}
		if err := a.sync(); err != nil {
			return err
		}
		a.mu.Lock()
		a.tail = 0
		a.mu.Unlock()
	}
	b := &batch{pos: a.end(), hwm: a.end(), ops: newIndex()}
	b.bw = bufio.NewWriterSize(countingWriter{a.f, &b.pos}, 1<<20)
	a.batch = b
	return nil
}

func (a *Archive) sync() error {
	if a.noSync {
		return nil
	}
	return a.f.Sync()
}

// unixMode converts the kept bits of an fs.FileMode to Unix mode bits.
func unixMode(m fs.FileMode) uint32 {
	u := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		u |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		u |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		u |= 0o1000
	}
	return u
}

func fileMode(u uint32, kind uint8) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	if kind == opDir {
		m |= fs.ModeDir
	}
	return m
}

// Add encrypts the contents of r (nil for a directory) as a new member
// name and appends it to the file. The member becomes part of the archive
// at the next Commit; until then it is invisible, and Close or Rollback
// drops it. Memory use does not depend on the size of r.
//
// Add fails with ErrExists if name is committed (unless o.Replace) or
// already added in this batch. If reading r fails, nothing of it remains.
func (a *Archive) Add(name string, r io.Reader, info Info, o *AddOptions) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	kind := uint8(opFile)
	switch t := info.Mode.Type(); {
	case t == fs.ModeDir:
		kind = opDir
		if r != nil {
			return errors.New("archive: a directory has no contents")
		}
	case t != 0:
		return fmt.Errorf("archive: %s: only regular files and directories can be added", name)
	case r == nil:
		return errors.New("archive: Add of a file without a reader")
	}
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if err := a.usable(); err != nil {
		return err
	}
	if err := a.startBatch(); err != nil {
		return err
	}
	b := a.batch
	pending := b.ops.findString(name)
	if pending >= 0 && b.ops.ents[pending].kind != opDelete {
		return fmt.Errorf("%s: %w (added twice)", name, ErrExists)
	}
	if pending < 0 && a.idx.findString(name) >= 0 && (o == nil || !o.Replace) {
		return fmt.Errorf("%s: %w", name, ErrExists)
	}
	nop := op{kind: kind, name: []byte(name), mode: unixMode(info.Mode), mtime: info.ModTime.UnixNano()}
	if info.ModTime.IsZero() {
		nop.mtime = 0
	}
	if kind == opFile {
		start := b.at()
		rand.Read(nop.nonce[:])
		s, err := newStream(a.hdr.cipher, &a.k.record, &nop.nonce, &a.hdr.fileID, start)
		if err != nil {
			return err
		}
		sw := newStreamWriter(b.bw, s)
		_, err = io.Copy(sw, r)
		size, cerr := sw.Close()
		if err == nil {
			err = cerr
		}
		b.hwm = max(b.hwm, b.at())
		if err != nil {
			// Flush what was buffered (earlier records among it) and
			// write the next record over this one's remains.
			if ferr := b.bw.Flush(); ferr != nil {
				a.discardBatch()
				return ferr
			}
			b.pos = start
			return err
		}
		nop.offset, nop.size = start, size
	}
	if pending := b.ops.findString(name); pending >= 0 {
		// A deletion in this batch becomes a replacement. The put goes
		// last so the batch's records stay in offset order.
		b.ops.kill(pending)
	}
	return b.ops.put(&nop)
}

// Remove drops members from the archive at the next Commit. Their records
// stay in the file, unreachable, until Compact.
func (a *Archive) Remove(names ...string) error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if err := a.usable(); err != nil {
		return err
	}
	for _, name := range names {
		if a.batch != nil && a.batch.ops.findString(name) >= 0 {
			return fmt.Errorf("%s: added or removed in this uncommitted batch; commit first", name)
		}
		if a.idx.findString(name) < 0 {
			return fmt.Errorf("%s: %w", name, ErrNotExist)
		}
	}
	if err := a.startBatch(); err != nil {
		return err
	}
	for _, name := range names {
		if a.batch.ops.findString(name) >= 0 {
			continue // named twice in this call
		}
		if err := a.batch.ops.put(&op{kind: opDelete, name: []byte(name)}); err != nil {
			return err
		}
	}
	return nil
}

// Pending returns the number of uncommitted additions and removals.
func (a *Archive) Pending() int {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if a.batch == nil {
		return 0
	}
	return a.batch.ops.live
}

// Rollback discards the uncommitted batch.
func (a *Archive) Rollback() error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if err := a.usable(); err != nil {
		return err
	}
	a.discardBatch()
	return nil
}

// discardBatch forgets the batch and cuts its records off (best effort:
// they would be a torn tail otherwise, harmless but wasted).
func (a *Archive) discardBatch() {
	if a.batch == nil {
		return
	}
	a.batch = nil
	if !a.readOnly && a.broken == nil {
		a.f.Truncate(a.end())
	}
}

// Commit makes the batch durable: it appends an index segment and a
// footer, syncing in between, so that a crash at any instant leaves the
// archive as it was before Commit or as it is after. The segment holds
// only this batch's changes, merged with the newest segments when they are
// no more than twice its size (so Open reads about log2(commits) segments,
// and an append writes O(batch) bytes amortised). Once a merge reaches the
// oldest segment the result is a full index again.
//
// If Commit fails, the archive is unusable (ErrClosed) and must be opened
// again: the file then holds the old or the new state.
func (a *Archive) Commit() error {
	a.wmu.Lock()
	defer a.wmu.Unlock()
	if err := a.usable(); err != nil {
		return err
	}
	if a.batch == nil {
		return nil
	}
	if a.batch.ops.live == 0 {
		a.discardBatch()
		return nil
	}
	if err := a.commit(); err != nil {
		a.mu.Lock()
		a.broken = fmt.Errorf("%w: commit failed (%v); open the archive again", ErrClosed, err)
		a.mu.Unlock()
		return err
	}
	return nil
}

func (a *Archive) commit() error {
	b := a.batch
	gen := a.last.gen + 1

	// Which runs does the new segment absorb?
	var scratch []byte
	size := int64(0)
	for i := range b.ops.ents {
		if b.ops.ents[i].dead {
			continue
		}
		o := b.op(i)
		o.gen = gen
		scratch = appendOp(scratch[:0], &o)
		size += int64(len(scratch))
	}
	keep, firstGen := len(a.runs), gen
	for keep > 0 && a.runs[keep-1].segLen < 2*size {
		size += a.runs[keep-1].segLen
		firstGen = a.runs[keep-1].firstGen
		keep--
	}
	base := keep == 0
	if base {
		firstGen = 1
	}

	// Apply the batch to the index; a failure from here on poisons the
	// archive, so there is no undo. The records are written first: readers
	// see the new members from here, durable once Commit returns.
	if err := b.bw.Flush(); err != nil {
		return err
	}
	a.mu.Lock()
	err := a.apply(b, gen, base)
	a.mu.Unlock()
	if err != nil {
		return err
	}

	ft := footer{gen: gen, prevCommit: a.lastAt, firstGen: firstGen, segOff: b.at(), live: uint64(a.idx.live)}
	if !base {
		ft.prevRun = a.runs[keep-1].at
	}
	rand.Read(ft.segNonce[:])
	s, err := newStream(a.hdr.cipher, &a.k.index, &ft.segNonce, &a.hdr.fileID, ft.segOff)
	if err != nil {
		return err
	}
	// writeRun reads the index without the lock: only a holder of wmu
	// changes it.
	sw := newStreamWriter(b.bw, s)
	err = a.writeRun(sw, firstGen, base)
	n, cerr := sw.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	ft.segLen = n
	if err := b.bw.Flush(); err != nil {
		return err
	}
	at := b.pos
	if err := a.sync(); err != nil {
		return err
	}
	if _, err := a.f.WriteAt(ft.marshal(a.k, &a.hdr.fileID, at), at); err != nil {
		return err
	}
	if end := at + footerSize; b.hwm > end {
		if err := a.f.Truncate(end); err != nil {
			return err
		}
	}
	if err := a.sync(); err != nil {
		return err
	}

	a.mu.Lock()
	a.runs = append(a.runs[:keep], run{at: at, segLen: ft.segLen, firstGen: firstGen, gen: gen})
	if base {
		a.idx.tombs = nil
	}
	a.last, a.lastAt = ft, at
	a.idx.tidy()
	a.mu.Unlock()
	a.batch = nil
	return nil
}

// apply puts the batch's operations into the index as commit gen.
func (a *Archive) apply(b *batch, gen uint64, base bool) error {
	a.idx.reserve(b.ops.live, len(b.ops.names))
	for i := range b.ops.ents {
		if b.ops.ents[i].dead {
			continue
		}
		o := b.op(i)
		o.gen = gen
		if o.kind == opDelete {
			a.idx.del(o.name, gen, base)
		} else if err := a.idx.put(&o); err != nil {
			return err
		}
	}
	return nil
}

// writeRun writes the operations of the run covering commits firstGen to
// the newest, straight from the index: the members added in those commits
// (a suffix of the index) and the deletions recorded since, in commit
// order. A base is every member and no deletion.
func (a *Archive) writeRun(w io.Writer, firstGen uint64, base bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var buf []byte
	var o op
	x := a.idx
	tombs := x.tombsSince(firstGen)
	if base {
		tombs = nil
	}
	writeTomb := func(t tomb) error {
		if x.findString(t.name) >= 0 {
			return nil // put again later in the run: the put supersedes it
		}
		o = op{kind: opDelete, gen: t.gen, name: []byte(t.name)}
		buf = appendOp(buf[:0], &o)
		_, err := bw.Write(buf)
		return err
	}
	for pos := x.since(firstGen); pos < len(x.ents); pos++ {
		e := &x.ents[pos]
		if e.dead {
			continue
		}
		for len(tombs) > 0 && tombs[0].gen < e.gen {
			if err := writeTomb(tombs[0]); err != nil {
				return err
			}
			tombs = tombs[1:]
		}
		o = op{kind: e.kind, gen: e.gen, name: x.nameOf(e), mode: e.mode, mtime: e.mtime,
			size: e.size, offset: e.offset, nonce: e.nonce}
		buf = appendOp(buf[:0], &o)
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	for _, t := range tombs {
		if err := writeTomb(t); err != nil {
			return err
		}
	}
	return bw.Flush()
}
