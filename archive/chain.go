package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
)

// scanBlock is how much of the file the backward footer scan reads at once.
const scanBlock = 1 << 20

// findFooter returns the newest authentic footer that ends at or before
// from. Normally that is the last footerSize bytes of the file (one read);
// after an interrupted append the scan walks back over the torn tail.
func findFooter(f io.ReaderAt, k *keys, fileID *[16]byte, from int64) (int64, footer, error) {
	buf := make([]byte, footerSize)
	if at := from - footerSize; at >= headerSize {
		if n, _ := f.ReadAt(buf, at); n == footerSize {
			if ft, ok := parseFooter(buf, k, fileID, at); ok {
				return at, ft, nil
			}
		}
	}
	block := make([]byte, scanBlock)
	hi := from - 1 // the scan has looked at footers starting after hi
	for hi >= headerSize {
		// Candidates start in [lo, hi] and need footerSize bytes.
		lo := max(headerSize, hi-scanBlock+footerSize)
		w := block[:hi-lo+footerSize]
		if n, err := f.ReadAt(w, lo); n < len(w) {
			if err != io.EOF || lo+int64(n) < from {
				if err == nil {
					err = io.ErrUnexpectedEOF
				}
				return 0, footer{}, err
			}
			w = w[:n]
		}
		for end := len(w); ; {
			i := bytes.LastIndex(w[:end], []byte(footerMagic))
			if i < 0 {
				break
			}
			at := lo + int64(i)
			if at+footerSize <= from && i+footerSize <= len(w) {
				if ft, ok := parseFooter(w[i:i+footerSize], k, fileID, at); ok {
					return at, ft, nil
				}
			}
			end = i + len(footerMagic) - 1
		}
		hi = lo - 1
	}
	return 0, footer{}, fmt.Errorf("%w: no complete commit found", ErrDamaged)
}

// readFooter reads and authenticates the footer at offset at.
func readFooter(f io.ReaderAt, k *keys, fileID *[16]byte, at int64) (footer, error) {
	buf := make([]byte, footerSize)
	if n, err := f.ReadAt(buf, at); n < footerSize {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: footer at %d beyond the end of the file", ErrDamaged, at)
		}
		return footer{}, err
	}
	ft, ok := parseFooter(buf, k, fileID, at)
	if !ok {
		return footer{}, fmt.Errorf("%w: footer at %d does not authenticate", ErrDamaged, at)
	}
	return ft, nil
}

// loadChain walks the index runs back from the newest commit's footer to
// the base and replays them, oldest first, into a fresh index.
func loadChain(ctx context.Context, f io.ReaderAt, k *keys, h *header, at int64, newest footer) (*index, []run, error) {
	var runs []run
	fts := []footer{newest}
	runs = append(runs, run{at: at, segLen: newest.segLen, firstGen: newest.firstGen, gen: newest.gen})
	for ft := newest; !ft.isBase(); {
		prev, err := readFooter(f, k, &h.fileID, ft.prevRun)
		if err != nil {
			return nil, nil, err
		}
		if prev.gen != ft.firstGen-1 {
			return nil, nil, fmt.Errorf("%w: index run at %d covers commits %d-%d, the next one starts at %d",
				ErrDamaged, ft.prevRun, prev.firstGen, prev.gen, ft.firstGen)
		}
		runs = append(runs, run{at: ft.prevRun, segLen: prev.segLen, firstGen: prev.firstGen, gen: prev.gen})
		fts = append(fts, prev)
		ft = prev
	}
	slices.Reverse(runs)
	slices.Reverse(fts)
	segBytes := int64(0)
	for i := range fts {
		segBytes += fts[i].segLen
	}
	// Room for the members the footer counts, and names: most of a
	// segment is names (a generous guess is cheaper than regrowing).
	idx := newIndexSized(int(min(newest.live, 1<<26)), int(min(segBytes*3/5, 1<<30)))
	for i := range fts {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if err := replaySegment(f, k, h, &fts[i], func(o *op) error {
			if o.kind == opDelete {
				idx.del(o.name, o.gen, false)
				return nil
			}
			return idx.put(o)
		}); err != nil {
			return nil, nil, err
		}
	}
	if waste := cap(idx.names) - len(idx.names); waste > len(idx.names)/4+64<<10 {
		idx.names = append(make([]byte, 0, len(idx.names)+len(idx.names)/8), idx.names...)
	}
	if uint64(idx.live) != newest.live {
		return nil, nil, fmt.Errorf("%w: the index holds %d members, its footer says %d", ErrDamaged, idx.live, newest.live)
	}
	return idx, runs, nil
}

// replaySegment decrypts the index segment of ft and hands each operation,
// checked against the run's bounds, to apply.
func replaySegment(f io.ReaderAt, k *keys, h *header, ft *footer, apply func(*op) error) error {
	s, err := newStream(h.cipher, &k.index, &ft.segNonce, &h.fileID, ft.segOff)
	if err != nil {
		return err
	}
	sr := newStreamReader(f, s, ft.segOff, ft.segLen)
	defer sr.close()
	or := newOpReader(sr, ft.segLen)
	var o op
	gen := ft.firstGen
	for {
		err := or.next(&o)
		if err == io.EOF {
			// Read past the end so the final chunk is authenticated even
			// when the last operation ended exactly on a chunk boundary.
			if _, err := sr.Read(nil); err != io.EOF {
				return err
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: index segment at %d: %v", ErrDamaged, ft.segOff, err)
		}
		switch {
		case o.gen < gen || o.gen > ft.gen:
			err = fmt.Errorf("operation of commit %d in a segment of commits %d-%d", o.gen, ft.firstGen, ft.gen)
		case o.kind == opDelete && ft.isBase():
			err = fmt.Errorf("deletion in a base index")
		case o.kind == opFile && o.offset+StreamLen(o.size) > ft.segOff:
			err = fmt.Errorf("record at %d overlaps its index", o.offset)
		case !ValidName(string(o.name)):
			err = fmt.Errorf("invalid member name %q", o.name)
		}
		if err != nil {
			return fmt.Errorf("%w: index segment at %d: %v", ErrDamaged, ft.segOff, err)
		}
		gen = o.gen
		if err := apply(&o); err != nil {
			return err
		}
	}
}
