package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Salvage: finding every member that can still be authenticated in a
// damaged archive, for Check, Repair and OpenOptions.Salvage.
//
// A member can be read when its index operation (name, record offset and
// stream nonce) sits in an index chunk that authenticates, and its record
// authenticates. The index of every commit is in its own segment, and the
// segments of merged runs repeat older operations, so the commits are
// walked from the newest back (through prevCommit, scanning past a damaged
// footer), reading each segment's chunks up to the first one that fails,
// and keeping for every name the operation of the highest commit number,
// until a segment that is a whole base has been read: it names everything
// that was live then, so nothing older can matter. A footer that does not
// authenticate (cut short by a truncation, or damaged) is still used if
// the segment it points to authenticates: the AEAD of the segment proves
// the pointer and the nonce right.

// salvage is the archive's state as far as its readable index tells.
type salvage struct {
	latest    map[string]*salvOp // the newest operation on each name
	lost      []uint64           // commits whose segment could not be read at all
	partial   []uint64           // commits whose segment could be read only in part
	unauth    []uint64           // commits used although their footer did not authenticate
	end       int64              // end of the newest commit used; headerSize if none
	endGen    uint64             // its number
	reachBase bool               // a whole base segment was read
}

type salvOp struct {
	op
	seq int // order of discovery within its generation, for listing
}

// collectSalvage walks the commits of the file of size bytes.
func collectSalvage(ctx context.Context, f io.ReaderAt, k *keys, h *header, size int64) (*salvage, error) {
	s := &salvage{latest: map[string]*salvOp{}, end: headerSize}
	at, ft, err := findFooter(f, k, &h.fileID, size)
	have := err == nil
	if err != nil && !errors.Is(err, ErrDamaged) {
		return nil, err
	}
	// A newer commit whose footer was cut short or damaged?
	from, prevGen, prevAt := int64(headerSize), uint64(0), int64(0)
	if have {
		from, prevGen, prevAt = at+footerSize, ft.gen, at
	}
	if lat, lft, ok, err := s.looseTail(ctx, f, k, h, from, size, prevGen, prevAt); err != nil {
		return nil, err
	} else if ok {
		s.unauth = append(s.unauth, lft.gen)
		s.end, s.endGen = lat+footerSize, lft.gen
		if s.reachBase || lft.prevCommit == 0 {
			return s, nil
		}
		if !have || at != lft.prevCommit {
			return s, nil // cannot be: the tail's commit follows the newest one
		}
	} else if have {
		s.end, s.endGen = at+footerSize, ft.gen
	}
	if !have {
		return s, nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		complete, err := s.readSegment(f, k, h, &ft)
		if err != nil {
			return nil, err
		}
		if complete && ft.isBase() {
			s.reachBase = true
			return s, nil
		}
		if ft.prevCommit == 0 {
			return s, nil
		}
		prev, err := readFooter(f, k, &h.fileID, ft.prevCommit)
		if err == nil && prev.gen == ft.gen-1 {
			at, ft = ft.prevCommit, prev
			continue
		}
		if err != nil && !errors.Is(err, ErrDamaged) {
			return nil, err
		}
		// The footer at prevCommit is damaged: use its fields if its
		// segment authenticates, else scan back for an older commit.
		if lf, ok := looseFooterAt(f, ft.prevCommit, size); ok && lf.gen == ft.gen-1 && lf.plausible(ft.prevCommit) {
			s.unauth = append(s.unauth, lf.gen)
			at, ft = ft.prevCommit, lf
			continue
		}
		oat, oft, err := findFooter(f, k, &h.fileID, ft.prevCommit)
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				return nil, err
			}
			for g := ft.gen - 1; g >= 1; g-- {
				s.lost = append(s.lost, g)
			}
			return s, nil
		}
		for g := ft.gen - 1; g > oft.gen; g-- {
			s.lost = append(s.lost, g)
		}
		at, ft = oat, oft
	}
}

// looseTail looks in [from, size) for the footer of the commit after
// (prevGen, prevAt) that does not authenticate -- cut short, or damaged --
// but whose segment does, at least in part; it reads that segment.
func (s *salvage) looseTail(ctx context.Context, f io.ReaderAt, k *keys, h *header, from, size int64, prevGen uint64, prevAt int64) (int64, footer, bool, error) {
	if size-from < looseFooterLen {
		return 0, footer{}, false, nil
	}
	tail := make([]byte, min(size-from, 64<<20))
	base := size - int64(len(tail))
	if n, err := f.ReadAt(tail, base); n < len(tail) && err != nil && err != io.EOF {
		return 0, footer{}, false, err
	}
	for end := len(tail); ; {
		i := bytes.LastIndex(tail[:end], []byte(footerMagic))
		if i < 0 {
			return 0, footer{}, false, nil
		}
		end = i + len(footerMagic) - 1
		at := base + int64(i)
		if size-at < looseFooterLen {
			continue
		}
		ft := decodeFooter(tail[i:min(len(tail), i+footerSize)])
		if ft.gen != prevGen+1 || ft.prevCommit != prevAt || !ft.plausible(at) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return 0, footer{}, false, err
		}
		before := len(s.latest)
		complete, err := s.readSegment(f, k, h, &ft)
		if err != nil {
			return 0, footer{}, false, err
		}
		if complete || len(s.latest) > before {
			if complete && ft.isBase() {
				s.reachBase = true
			}
			return at, ft, true, nil
		}
		s.partial = slices.DeleteFunc(s.partial, func(g uint64) bool { return g == ft.gen })
		s.lost = slices.DeleteFunc(s.lost, func(g uint64) bool { return g == ft.gen })
	}
}

// looseFooterAt reads the footer at offset at without checking its MAC.
func looseFooterAt(f io.ReaderAt, at, size int64) (footer, bool) {
	b := make([]byte, min(footerSize, size-at))
	if len(b) < looseFooterLen {
		return footer{}, false
	}
	if n, _ := f.ReadAt(b, at); n < len(b) || string(b[:8]) != footerMagic {
		return footer{}, false
	}
	return decodeFooter(b), true
}

// readSegment applies the operations of ft's segment that authenticate,
// keeping the newest per name. complete says whether all of it did.
func (s *salvage) readSegment(f io.ReaderAt, k *keys, h *header, ft *footer) (bool, error) {
	seq := 0
	err := replaySegment(f, k, h, ft, func(o *op) error {
		name := string(o.name)
		seq++
		if cur, ok := s.latest[name]; ok && cur.gen >= o.gen {
			return nil
		}
		c := &salvOp{op: *o, seq: seq}
		c.name = []byte(name)
		s.latest[name] = c
		return nil
	})
	switch {
	case err == nil:
		return true, nil
	case !errors.Is(err, ErrDamaged):
		return false, err
	case seq > 0:
		s.partial = append(s.partial, ft.gen)
	default:
		s.lost = append(s.lost, ft.gen)
	}
	return false, nil
}

// members returns the members the salvage found, in the order they were
// added as far as it can tell (commit, then their order in the segment).
func (s *salvage) members() []*salvOp {
	var out []*salvOp
	for _, o := range s.latest {
		if o.kind != opDelete {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(p, q *salvOp) int {
		switch {
		case p.gen != q.gen:
			return cmpU(p.gen, q.gen)
		case p.seq != q.seq:
			return p.seq - q.seq // the order of the segment, which is the index's
		case p.offset != q.offset:
			return cmpI(p.offset, q.offset)
		}
		return bytes.Compare(p.name, q.name)
	})
	return out
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

func cmpI(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// salvageIndex builds an index of the members ops (a generation order).
func salvageIndex(ops []*salvOp) (*index, error) {
	x := newIndex()
	for _, o := range ops {
		if err := x.put(&o.op); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// authenticateRecord reads a whole record and checks every chunk,
// stopping within 1 MiB once ctx is cancelled.
func authenticateRecord(ctx context.Context, f io.ReaderAt, k *keys, h *header, o *op) error {
	s, err := newStream(h.cipher, &k.record, &o.nonce, &h.fileID, o.offset)
	if err != nil {
		return err
	}
	sr := newStreamReader(f, s, o.offset, o.size)
	defer sr.close()
	for i := int64(0); i < sr.n; i++ {
		if i%16 == 15 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := sr.load(i); err != nil {
			if errors.Is(err, ErrDamaged) && sr.n > 1 {
				return fmt.Errorf("%w (chunk %d of %d)", err, i+1, sr.n)
			}
			return err
		}
	}
	return nil
}
