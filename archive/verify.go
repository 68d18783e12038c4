package archive

import (
	"context"
	"errors"
	"fmt"
)

// Report is what Verify found.
type Report struct {
	Commits     uint64 // commits walked (all of them)
	Members     int    // members in the archive
	Records     int    // records authenticated, live and superseded
	LiveRecords int    // of which members of the archive
	Segments    int    // index segments authenticated
	FileSize    int64
	Tail        int64    // bytes after the last complete commit (an interrupted append)
	Problems    []string // damage found; empty when the archive is sound
}

// OK reports whether Verify found neither damage nor a torn tail.
func (r *Report) OK() bool { return len(r.Problems) == 0 && r.Tail == 0 }

// maxProblems bounds the list of problems a badly damaged file produces.
const maxProblems = 100

// Verify authenticates every byte of the file: the header, every commit's
// footer and index segment (including superseded ones), and every record
// ever written (including removed members), and checks that the commits
// tile the file with no gap or overlap. It also reports a torn tail.
// Problems are listed in the report; the error is only for I/O failures
// and cancellation. progress, if not nil, gets the bytes checked so far.
func (a *Archive) Verify(ctx context.Context, progress func(done, total int64)) (Report, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	r := Report{Members: a.idx.live, Tail: a.tail, FileSize: a.end() + a.tail}
	if err := a.usable(); err != nil {
		return r, err
	}
	if a.salvaged != nil {
		return r, fmt.Errorf("%w: the index does not load (opened from what can be salvaged): use Check", ErrDamaged)
	}
	problem := func(format string, args ...any) {
		if len(r.Problems) < maxProblems {
			r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
		}
	}
	liveFiles := 0
	for i := range a.idx.ents {
		if e := &a.idx.ents[i]; !e.dead && e.kind == opFile {
			liveFiles++
		}
	}
	var done int64
	total := a.end()
	ft := a.last
	for {
		if err := ctx.Err(); err != nil {
			return r, err
		}
		r.Commits++
		start := int64(headerSize)
		if ft.prevCommit != 0 {
			start = ft.prevCommit + footerSize
		}
		next := start // where the next record of this commit must start
		err := replaySegment(a.f, a.k, &a.hdr, &ft, func(o *op) error {
			if o.kind != opFile || o.offset < start || o.offset >= ft.segOff {
				return nil // not a record of this commit
			}
			if o.offset != next {
				problem("commit %d: record of %q at %d, expected one at %d", ft.gen, o.name, o.offset, next)
			}
			next = o.offset + StreamLen(o.size)
			r.Records++
			if err := a.authenticate(ctx, o); err != nil {
				if !errors.Is(err, ErrDamaged) {
					return err
				}
				problem("%q (commit %d): %v", o.name, ft.gen, err)
			} else if pos := a.idx.find(o.name); pos >= 0 {
				if e := &a.idx.ents[pos]; e.offset == o.offset && e.nonce == o.nonce {
					r.LiveRecords++
				}
			}
			done += StreamLen(o.size)
			if progress != nil {
				progress(done, total)
			}
			return nil
		})
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				return r, err
			}
			problem("commit %d: %v", ft.gen, err)
		} else {
			r.Segments++
			if next != ft.segOff {
				problem("commit %d: records end at %d, its index segment starts at %d", ft.gen, next, ft.segOff)
			}
		}
		if ft.prevCommit == 0 {
			if start != headerSize || ft.gen != 1 {
				problem("commit %d has no predecessor", ft.gen)
			}
			break
		}
		prev, err := readFooter(a.f, a.k, &a.hdr.fileID, ft.prevCommit)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				return r, err
			}
			problem("commit %d: %v; older commits not checked", ft.gen-1, err)
			break
		}
		if prev.gen != ft.gen-1 {
			problem("commit %d follows commit %d", ft.gen, prev.gen)
			break
		}
		ft = prev
	}
	if r.LiveRecords != liveFiles {
		problem("%d of %d members' records were found and authenticated", r.LiveRecords, liveFiles)
	}
	return r, nil
}

// authenticate reads a whole record and checks every chunk.
func (a *Archive) authenticate(ctx context.Context, o *op) error {
	return authenticateRecord(ctx, a.f, a.k, &a.hdr, o)
}
