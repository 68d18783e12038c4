package reencrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// DefaultChunk is the largest chunk rewritten between two metadata commits
// unless the format's metadata holds less: large enough that the commits
// (each a sync) cost little next to the data, small enough to keep in
// memory and to redo after a crash.
const DefaultChunk = 32 << 20

// rampChunk is the first chunk of a run in default chunks: the chunks
// double from it up to the full size. Until a chunk is prepared nothing
// overlaps (see pipeline); a small first one starts the disk's work
// early, for a few syncs more.
const rampChunk = 4 << 20

// RunOptions tune Run.
type RunOptions struct {
	// Progress, if set, is called after every chunk with the bytes done
	// and the data area's size.
	Progress func(done, total int64)
	// Chunk overrides the chunk size (rounded down to the alignment, at
	// most the format's limit); 0 means DefaultChunk.
	Chunk int64
	// rampFrom, for the crash-state explorer's small volumes, is where
	// the chunks start doubling from (0: rampChunk, for default chunks).
	rampFrom int64
}

// Interrupted is Run stopped by its context after a chunk: the progress is
// committed and the next Resume continues from Done.
type Interrupted struct {
	Done, Total int64
	Err         error
}

func (e *Interrupted) Error() string {
	return fmt.Sprintf("interrupted: %d of %d bytes re-encrypted (run it again to continue)", e.Done, e.Total)
}
func (e *Interrupted) Unwrap() error { return e.Err }

// Run re-encrypts what remains of r's data area, chunk by chunk, and
// finishes the volume. It first completes the chunk a crash may have left
// half rewritten. Cancelling ctx stops it after the current chunk, with
// the progress committed (an *Interrupted error).
func Run(ctx context.Context, r volume.Reencryption, o RunOptions) error {
	p := r.Plan()
	e, err := newEngine(r, p, o)
	if err != nil {
		return err
	}
	defer e.free()
	if p.Hot != nil {
		if err := e.recoverHot(ctx, p.Hot); err != nil {
			return fmt.Errorf("completing the chunk the interrupted run was rewriting: %w", err)
		}
	}
	e.report()
	// The next chunks are read and transformed while the current one is
	// committed, written and synced (see pipeline).
	pl := e.startPipeline()
	defer pl.stop()
	for !e.finished() {
		if err := ctx.Err(); err != nil {
			return e.interrupted(ctx, err)
		}
		c := pl.next()
		if c.err != nil {
			return c.err
		}
		err := e.commitChunk(ctx, c)
		pl.recycle(c)
		if err != nil {
			return err
		}
		e.report()
	}
	// With checksums the last chunk's hot record is not followed by a
	// commit of it as done: the chunk is written and synced, so Finish
	// may replace the record at once. A crash before it does leaves the
	// record, whose chunk is found all new, as after any crash between a
	// chunk's sync and the next commit.
	return r.Finish(ctx)
}

// engine is one run.
type engine struct {
	r          volume.Reencryption
	p          *volume.ReencryptPlan
	dev        volume.Device
	old, new   sector.Mode
	chunkSize  int64
	firstChunk int64  // the first chunk's size: the chunks double up to chunkSize
	buf        []byte // the hot chunk a crash left, while it is completed
	done       int64  // as Plan.Done
	hotPending bool   // the last commit was a hot one (checksum mode)
	hash       hashes.Spec
	progress   func(done, total int64)
}

func newEngine(r volume.Reencryption, p *volume.ReencryptPlan, o RunOptions) (*engine, error) {
	e := &engine{r: r, p: p, dev: r.Device(), done: p.Done, progress: o.Progress}
	if p.Old.Mode != nil {
		e.old = sector.Parallel(p.Old.Mode, 0)
	}
	if p.New.Mode != nil {
		e.new = sector.Parallel(p.New.Mode, 0)
	}
	if p.Resilience == volume.ResilienceChecksum {
		h, err := hashes.Lookup(p.Hash)
		if err != nil {
			return nil, fmt.Errorf("%w: re-encryption checksum hash %q", volume.ErrUnsupported, p.Hash)
		}
		if p.BlockSize <= 0 || p.SumSize <= 0 || p.SumSize > h.Size {
			return nil, fmt.Errorf("%w: re-encryption checksums of %d bytes over %d-byte blocks", volume.ErrDamaged, p.SumSize, p.BlockSize)
		}
		e.hash = h
	}
	align := max(p.Align, 512)
	chunk := o.Chunk
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	if p.MaxChunk > 0 {
		chunk = min(chunk, p.MaxChunk)
	}
	chunk -= chunk % align
	if chunk <= 0 {
		return nil, fmt.Errorf("%w: a chunk of the re-encryption would be empty (limit %d, alignment %d)", volume.ErrDamaged, p.MaxChunk, align)
	}
	e.chunkSize = chunk
	e.firstChunk = chunk
	switch {
	case o.rampFrom > 0:
		e.firstChunk = min(chunk, max(align, o.rampFrom-o.rampFrom%align))
	case o.Chunk <= 0 && chunk > 2*rampChunk:
		e.firstChunk = rampChunk - rampChunk%align
	}
	if p.Hot != nil {
		e.buf = make([]byte, p.Hot.Length)
	}
	return e, nil
}

func (e *engine) free() { clear(e.buf) }

// finishedAt reports whether done (as Plan.Done) is the whole data area.
func (e *engine) finishedAt(done int64) bool {
	if e.p.Backward {
		return done <= 0
	}
	return done >= e.p.Size
}

func (e *engine) finished() bool { return e.finishedAt(e.done) }

// chunkAfter is the chunk of at most size bytes that follows when done
// bytes are done, and where the progress then stands.
func (e *engine) chunkAfter(done, size int64) (off, n, next int64) {
	if e.p.Backward {
		n = min(size, done)
		return done - n, n, done - n
	}
	n = min(size, e.p.Size-done)
	return done, n, done + n
}

func (e *engine) report() {
	if e.progress == nil {
		return
	}
	d := e.done
	if e.p.Backward {
		d = e.p.Size - e.done
	}
	e.progress(d, e.p.Size)
}

// interrupted commits the progress and reports the stop.
func (e *engine) interrupted(ctx context.Context, cause error) error {
	if e.hotPending {
		// The commit must happen although ctx is done.
		if err := e.r.CommitDone(context.WithoutCancel(ctx), e.done); err != nil {
			return err
		}
	}
	d := e.done
	if e.p.Backward {
		d = e.p.Size - e.done
	}
	return &Interrupted{Done: d, Total: e.p.Size, Err: cause}
}

// readOld reads the chunk [off, off+n) where the old side keeps it.
func (e *engine) readOld(b []byte, off int64) error {
	return readFull(e.dev, b, e.p.Old.Offset+off)
}

func readFull(dev io.ReaderAt, b []byte, off int64) error {
	n, err := dev.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading %d bytes at %d: %w", len(b), off, err)
}

// transform turns the old form of data-area bytes at off into the new,
// on all cores.
func (e *engine) transform(b []byte, off int64) { transformWith(e.old, e.new, e.p, b, off) }

// transformWith is transform with the modes given (nil: plain).
func transformWith(old, new sector.Mode, p *volume.ReencryptPlan, b []byte, off int64) {
	if old != nil {
		old.Decrypt(b, b, p.Old.FirstSector+uint64(off/int64(p.Old.SectorSize)))
	}
	if new != nil {
		new.Encrypt(b, b, p.New.FirstSector+uint64(off/int64(p.New.SectorSize)))
	}
}

// untransform is transform's inverse: new-form bytes at off back to the
// old form.
func (e *engine) untransform(b []byte, off int64) {
	if e.new != nil {
		e.new.Decrypt(b, b, e.p.New.FirstSector+uint64(off/int64(e.p.New.SectorSize)))
	}
	if e.old != nil {
		e.old.Encrypt(b, b, e.p.Old.FirstSector+uint64(off/int64(e.p.Old.SectorSize)))
	}
}

// tornSector is the unit a disk writes whole: a torn write leaves each
// of a block's sectors old or new.
const tornSector = 512

// untear looks for the mix of blk (as on disk) and back (blk taken back
// from the new form) whose sectors hash to want: what a block torn by a
// power cut held before. On a match it puts that into blk and returns
// true. Each sector of the new form goes back to the old one on its own
// where the encryption sector is 512 bytes or the mode works on smaller
// units (XTS); otherwise no mix matches and the block stays as it is.
func untear(h hash.Hash, blk, back, want, sum []byte) bool {
	n := (len(blk) + tornSector - 1) / tornSector
	if n < 2 || n > 16 {
		return false
	}
	mix := make([]byte, len(blk))
	defer clear(mix)
	for mask := 1; mask < 1<<n-1; mask++ {
		for j := 0; j < n; j++ {
			lo, hi := j*tornSector, min((j+1)*tornSector, len(blk))
			src := back
			if mask&(1<<j) != 0 {
				src = blk
			}
			copy(mix[lo:hi], src[lo:hi])
		}
		sum = blockSum(h, mix, sum)
		if bytes.Equal(sum[:len(want)], want) {
			copy(blk, mix)
			return true
		}
	}
	return false
}

// writeNew writes new-form bytes of the data area at off.
func (e *engine) writeNew(b []byte, off int64) error {
	n, err := e.dev.WriteAt(b, e.p.New.Offset+off)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("writing %d bytes at %d: %w", len(b), e.p.New.Offset+off, err)
	}
	return nil
}

// commitChunk rewrites a prepared chunk: protect, write, sync, commit.
func (e *engine) commitChunk(ctx context.Context, c *prepared) error {
	if err := e.r.CommitHot(ctx, c.off, c.n, c.prot); err != nil {
		return err
	}
	if err := e.writeNew(c.data, c.off); err != nil {
		return err
	}
	if err := e.dev.Sync(); err != nil {
		return err
	}
	e.done = c.next
	if e.p.Resilience == volume.ResilienceChecksum {
		// The next chunk's hot commit records this one as done.
		e.hotPending = true
		return nil
	}
	return e.r.CommitDone(ctx, e.done)
}

func blockSum(h hash.Hash, block, sum []byte) []byte {
	h.Reset()
	h.Write(block)
	return h.Sum(sum[:0])
}

// recoverHot completes the chunk a crash interrupted and commits it.
func (e *engine) recoverHot(ctx context.Context, hot *volume.ReencryptHot) error {
	if hot.Offset < 0 || hot.Length <= 0 || hot.Offset+hot.Length > e.p.Size {
		return fmt.Errorf("%w: the interrupted chunk %d+%d lies outside the %d-byte data area", volume.ErrDamaged, hot.Offset, hot.Length, e.p.Size)
	}
	b := e.buf[:hot.Length]
	defer clear(b)
	switch e.p.Resilience {
	case volume.ResilienceChecksum:
		if err := e.recoverByChecksums(b, hot); err != nil {
			return err
		}
	case volume.ResilienceJournal:
		if int64(len(hot.Protection)) != hot.Length {
			return fmt.Errorf("%w: the journal holds %d bytes of a %d-byte chunk", volume.ErrDamaged, len(hot.Protection), hot.Length)
		}
		copy(b, hot.Protection)
		e.transform(b, hot.Offset)
		if err := e.writeNew(b, hot.Offset); err != nil {
			return err
		}
	case volume.ResilienceDataShift:
		// The old copy is intact where the old side says: redo it.
		if err := e.readOld(b, hot.Offset); err != nil {
			return err
		}
		e.transform(b, hot.Offset)
		if err := e.writeNew(b, hot.Offset); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: a chunk interrupted under resilience %q cannot be recovered", volume.ErrUnsupported, e.p.Resilience)
	}
	if err := e.dev.Sync(); err != nil {
		return err
	}
	if e.p.Backward {
		e.done = hot.Offset
	} else {
		e.done = hot.Offset + hot.Length
	}
	e.hotPending = false
	return e.r.CommitDone(ctx, e.done)
}

// recoverByChecksums re-encrypts the blocks of the hot chunk that still
// hold what their checksums say: those not yet rewritten. Any other block
// was rewritten (the new ciphertext of a block matching the old one's
// checksum has probability 2^-8·SumSize).
func (e *engine) recoverByChecksums(b []byte, hot *volume.ReencryptHot) error {
	bs, ss := e.p.BlockSize, e.p.SumSize
	blocks := (len(b) + bs - 1) / bs
	if len(hot.Protection) < blocks*ss {
		return fmt.Errorf("%w: %d bytes of checksums for %d blocks", volume.ErrDamaged, len(hot.Protection), blocks)
	}
	if err := readFull(e.dev, b, e.p.New.Offset+hot.Offset); err != nil {
		return err
	}
	h := e.hash.New()
	sum := make([]byte, 0, e.hash.Size)
	// Runs of old blocks are rewritten together.
	flush := func(from, to int) error {
		if from >= to {
			return nil
		}
		lo, hi := int64(from*bs), min(int64(to*bs), int64(len(b)))
		e.transform(b[lo:hi], hot.Offset+lo)
		return e.writeNew(b[lo:hi], hot.Offset+lo)
	}
	// back is the chunk as it was if every block was rewritten: the new
	// form taken back to the old one. A block that matches its checksum
	// in neither form was being written when the power went, some of
	// its disk sectors new, some old (a write tears at sector
	// boundaries): the mix of the two forms that matches is what it was.
	back := make([]byte, len(b))
	defer clear(back)
	copy(back, b)
	e.untransform(back, hot.Offset)
	start := -1
	for i := 0; i < blocks; i++ {
		lo, hi := i*bs, min((i+1)*bs, len(b))
		blk := b[lo:hi]
		want := hot.Protection[i*ss : (i+1)*ss]
		sum = blockSum(h, blk, sum)
		old := bytes.Equal(sum[:ss], want)
		if !old {
			sum = blockSum(h, back[lo:hi], sum)
			if !bytes.Equal(sum[:ss], want) {
				// Neither: torn. If a mix matches, rewrite that.
				old = untear(h, blk, back[lo:hi], want, sum)
			}
		}
		switch {
		case old && start < 0:
			start = i
		case !old && start >= 0:
			if err := flush(start, i); err != nil {
				return err
			}
			start = -1
		}
	}
	if start >= 0 {
		return flush(start, blocks)
	}
	return nil
}
