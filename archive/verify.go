package archive

import (
	"context"
	"errors"
	"fmt"
	"os"
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
			if err := a.authenticate(o); err != nil {
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
func (a *Archive) authenticate(o *op) error {
	s, err := newStream(a.hdr.cipher, &a.k.record, &o.nonce, &a.hdr.fileID, o.offset)
	if err != nil {
		return err
	}
	sr := newStreamReader(a.f, s, o.offset, o.size)
	defer sr.close()
	for i := int64(0); i < sr.n; i++ {
		if err := sr.load(i); err != nil {
			return err
		}
	}
	return nil
}

// RepairReport says what Repair cut off.
type RepairReport struct {
	Truncated  int64  // bytes removed from the end of the file
	FromCommit uint64 // the newest commit found intact before repair (0 if none)
	KeptCommit uint64 // the commit the archive now ends with
	Members    int
}

// Repair makes the file end with its newest commit whose index loads:
// normally it cuts off the torn tail of an interrupted append; if the
// newest commit's index is damaged, it rolls back to the one before (and
// those commits' changes are lost). Damage inside older records is not
// repairable here: remove the members Verify names, then Compact.
func Repair(ctx context.Context, path string, cred Credentials) (RepairReport, error) {
	var rep RepairReport
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return rep, err
	}
	a := &Archive{path: path, f: f}
	defer a.closeFiles()
	if a.unlock, err = lockFile(f); err != nil {
		return rep, err
	}
	if err := a.load(ctx, cred, true); err != nil {
		return rep, err
	}
	defer a.k.wipe()
	st, err := f.Stat()
	if err != nil {
		return rep, err
	}
	if _, newest, err := findFooter(f, a.k, &a.hdr.fileID, st.Size()); err == nil {
		rep.FromCommit = newest.gen
	}
	rep.KeptCommit, rep.Members = a.last.gen, a.idx.live
	rep.Truncated = st.Size() - a.end()
	if rep.Truncated == 0 {
		return rep, nil
	}
	if err := f.Truncate(a.end()); err != nil {
		return rep, err
	}
	return rep, f.Sync()
}
