package archive

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
)

// walkWindow is how much of the file Walk reads at once.
const walkWindow = 1 << 20

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
// authenticated. It reads the file sequentially in 1 MiB blocks rather than
// one read per member, decrypts the records of each block on up to
// OpenOptions.Threads cores, and reuses its buffer: data is valid only
// until fn returns. Memory use is 1 MiB or the largest member, whichever
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
		k, err := f.ReadAt(win[:want], off)
		if err != nil && err != io.EOF {
			return err
		}
		win = win[:k]
		// The records wholly inside the window.
		j := i
		for j < len(items) && items[j].e.offset >= off && items[j].e.offset+StreamLen(items[j].e.size) <= off+int64(k) &&
			(j == i || items[j].e.offset >= items[j-1].e.offset+StreamLen(items[j-1].e.size)) {
			j++
		}
		if j == i {
			return fmt.Errorf("%w: %s: record cut short", ErrDamaged, it.ent.Name)
		}
		decryptAll(items[i:j], win, off, threads, c, rk, &id)
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

// decryptAll opens the records of items, which lie in win (the file from
// offset off), in place, on up to threads goroutines each taking a
// contiguous share of the bytes.
func decryptAll(items []walkItem, win []byte, off int64, threads int, c Cipher, rk *purposeKey, id *[16]byte) {
	one := func(items []walkItem) {
		var s streamCrypt
		for k := range items {
			it := &items[k]
			at := it.e.offset - off
			if it.err = s.init(c, rk, &it.e.nonce, id, it.e.offset); it.err == nil {
				it.data, it.err = openRecord(&s, win[at:at+StreamLen(it.e.size)], it.e.size)
			}
		}
	}
	total := int64(0)
	for k := range items {
		total += StreamLen(items[k].e.size)
	}
	// Below 64 KiB a second goroutine costs more than it saves.
	if threads = min(threads, int(total/(64<<10))); threads <= 1 || len(items) < 2 {
		one(items)
		return
	}
	var wg sync.WaitGroup
	share, start, acc := total/int64(threads), 0, int64(0)
	for k := range items {
		acc += StreamLen(items[k].e.size)
		if acc >= share || k == len(items)-1 {
			part := items[start : k+1]
			wg.Go(func() { one(part) })
			start, acc = k+1, 0
		}
	}
	wg.Wait()
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
