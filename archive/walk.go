package archive

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
)

// walkWindow is how much of the file Walk reads at once: large enough
// that 500 thumbnails are one window, whose reading and decryption are
// shared out over the cores with one hand-off.
const walkWindow = 4 << 20

// maxInt is the largest slice length on this platform.
const maxInt = int(^uint(0) >> 1)

var walkBufs = sync.Pool{New: func() any { b := make([]byte, walkWindow); return &b }}

// walkItem is one member as Walk found it, and what decrypting it gave.
type walkItem struct {
	e    entry
	ent  Entry
	data []byte
	err  error
}

// Walk calls fn for every member, in the order of their records in the
// file (directories first), with its whole contents (nil for a directory),
// authenticated. It reads the file sequentially in 4 MiB blocks rather than
// one read per member, decrypts the records of each block on up to
// OpenOptions.Threads cores, and reuses its buffer: data is valid only
// until fn returns. Memory use is 4 MiB or the largest member, whichever
// is more. The members are those of the archive when Walk starts; fn may
// read the archive, but changes made meanwhile are not seen. fn is called
// from one goroutine at a time, in order; an error from fn, or a member
// that does not authenticate, stops the walk and is returned.
func (a *Archive) Walk(fn func(e Entry, data []byte) error) error {
	a.mu.RLock()
	if err := a.usable(); err != nil {
		a.mu.RUnlock()
		return err
	}
	f, x := a.f, a.idx
	items := make([]walkItem, 0, x.live)
	for i := range x.ents {
		if e := &x.ents[i]; !e.dead {
			items = append(items, walkItem{e: *e, ent: x.entryOf(e)})
		}
	}
	c, rk, id, end := a.hdr.cipher, &a.k.record, a.hdr.fileID, a.end()
	a.mu.RUnlock()
	slices.SortStableFunc(items, func(p, q walkItem) int {
		pf, qf := p.e.kind == opFile, q.e.kind == opFile
		switch {
		case pf != qf: // directories first: no data to read
			if qf {
				return -1
			}
			return 1
		case p.e.offset < q.e.offset:
			return -1
		case p.e.offset > q.e.offset:
			return 1
		}
		return 0
	})
	threads := a.threads
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}

	bp := walkBufs.Get().(*[]byte)
	defer walkBufs.Put(bp)
	buf := *bp
	for i := 0; i < len(items); {
		it := &items[i]
		if it.e.kind != opFile {
			if err := fn(it.ent, nil); err != nil {
				return err
			}
			i++
			continue
		}
		// Read a window from this record on: a block's worth (or the
		// whole record if it is larger), within the committed file.
		off := it.e.offset
		want := max(StreamLen(it.e.size), min(walkWindow, end-off))
		if want > int64(maxInt) {
			return fmt.Errorf("%s: %d bytes do not fit in memory on this platform: use Open", it.ent.Name, it.e.size)
		}
		win := buf
		if int64(len(win)) < want {
			win = make([]byte, want)
		}
		win = win[:want]
		// The records wholly inside the window, none overlapping the one
		// before (an index could claim so; decrypting in place would
		// then garble them).
		j := i
		for j < len(items) && items[j].e.offset >= off && items[j].e.offset+StreamLen(items[j].e.size) <= off+want &&
			(j == i || items[j].e.offset >= items[j-1].e.offset+StreamLen(items[j-1].e.size)) {
			j++
		}
		if err := readAndOpen(items[i:j], f, win, off, threads, c, rk, &id); err != nil {
			return err
		}
		for ; i < j; i++ {
			it := &items[i]
			if it.err != nil {
				return fmt.Errorf("%w: %s: %v", ErrDamaged, it.ent.Name, it.err)
			}
			if err := fn(it.ent, it.data); err != nil {
				return err
			}
			it.data = nil
		}
	}
	return nil
}

// readAndOpen reads the records of items, which lie in the window win of
// the file from offset off, and opens them in place, sharing the work out
// over up to threads goroutines in contiguous shares of the bytes. This
// goroutine reads the shares one after the other -- in file order, so that
// a cold page cache sees one sequential reader and reads ahead -- and hands
// each share but the last to another goroutine to decrypt as soon as it is
// in; it decrypts the last itself. Reading from a warm page cache is a copy
// that costs about what decrypting does, so the two overlap. A record the
// file ends inside gets a "cut short" error; any other read error is
// returned.
func readAndOpen(items []walkItem, f io.ReaderAt, win []byte, off int64, threads int, c Cipher, rk *purposeKey, id *[16]byte) error {
	read := func(items []walkItem) (int64, error) {
		first, last := &items[0].e, &items[len(items)-1].e
		lo, hi := first.offset-off, last.offset+StreamLen(last.size)-off
		n, err := f.ReadAt(win[lo:hi], off+lo)
		if err != nil && err != io.EOF {
			return 0, err
		}
		return lo + int64(n), nil
	}
	open := func(items []walkItem, end int64) {
		var s streamCrypt
		for k := range items {
			it := &items[k]
			at := it.e.offset - off
			rec := win[at : at+StreamLen(it.e.size)]
			if at+int64(len(rec)) > end {
				it.err = errors.New("record cut short")
				continue
			}
			if it.err = s.init(c, rk, &it.e.nonce, id, it.e.offset); it.err == nil {
				it.data, it.err = openRecord(&s, rec, it.e.size)
			}
		}
	}
	total := int64(0)
	for k := range items {
		total += StreamLen(items[k].e.size)
	}
	// Below 64 KiB a second goroutine costs more than it saves.
	if threads = min(threads, int(total/(64<<10))); threads <= 1 || len(items) < 2 {
		end, err := read(items)
		if err == nil {
			open(items, end)
		}
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	share, start, acc := total/int64(threads), 0, int64(0)
	for k := range items {
		acc += StreamLen(items[k].e.size)
		if last := k == len(items)-1; last || acc >= share {
			part := items[start : k+1]
			end, err := read(part)
			if err != nil {
				return err
			}
			if last {
				open(part, end)
			} else {
				wg.Go(func() { open(part, end) })
			}
			start, acc = k+1, 0
		}
	}
	return nil
}

// openRecord authenticates and decrypts a whole record in place and
// returns its plaintext (the chunks moved together over their tags).
func openRecord(s *streamCrypt, rec []byte, size int64) ([]byte, error) {
	n := streamChunks(size)
	for i := int64(0); i < n; i++ {
		ct := rec[i*(ChunkSize+TagSize):]
		plen := min(int64(ChunkSize), size-i*ChunkSize)
		p, err := s.open(ct[:0], ct[:plen+TagSize], i, i == n-1)
		if err != nil {
			return nil, err
		}
		if i > 0 { // chunk 0 opens where its plaintext belongs
			copy(rec[i*ChunkSize:], p)
		}
	}
	return rec[:size], nil
}
