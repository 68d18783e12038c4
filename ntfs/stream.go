package ntfs

import (
	"fmt"
	"io"
	"sort"
	"sync"
)

// dataRun maps clusters [vcn, vcn+length) of an attribute to clusters
// from lcn on, or to nothing (a sparse run) when lcn < 0.
type dataRun struct {
	vcn, lcn, length int64
}

// decodeRuns decodes a mapping-pairs array. Each pair is a header byte
// (low nibble: size of the length, high nibble: size of the signed LCN
// delta, 0 for a sparse run), the length, the delta; a zero byte ends it.
func decodeRuns(b []byte, vcn int64) ([]dataRun, error) {
	var runs []dataRun
	lcn := int64(0)
	for p := 0; p < len(b) && b[p] != 0; {
		lenSize, offSize := int(b[p]&0xF), int(b[p]>>4)
		p++
		if lenSize == 0 || lenSize > 8 || offSize > 8 || p+lenSize+offSize > len(b) {
			return nil, fmt.Errorf("%w: bad mapping pair", ErrCorrupt)
		}
		length := int64(0)
		for i := lenSize - 1; i >= 0; i-- {
			length = length<<8 | int64(b[p+i])
		}
		p += lenSize
		if length <= 0 || vcn+length < vcn {
			return nil, fmt.Errorf("%w: mapping pair of %d clusters", ErrCorrupt, length)
		}
		r := dataRun{vcn: vcn, lcn: -1, length: length}
		if offSize > 0 {
			delta := int64(int8(b[p+offSize-1])) // sign from the top byte
			for i := offSize - 2; i >= 0; i-- {
				delta = delta<<8 | int64(b[p+i])
			}
			p += offSize
			lcn += delta
			if lcn < 0 {
				return nil, fmt.Errorf("%w: mapping pair to cluster %d", ErrCorrupt, lcn)
			}
			r.lcn = lcn
		}
		runs = append(runs, r)
		vcn += length
	}
	return runs, nil
}

// stream is the content of one attribute (usually a file's unnamed $DATA):
// resident bytes, or runs of clusters, possibly compressed in units.
type stream struct {
	f        *FS
	resident []byte
	runs     []dataRun
	size     int64 // data size
	initSize int64 // bytes past this read as zeros
	unit     int64 // compression unit in bytes, 0 when not compressed

	mu        sync.Mutex // guards the decoded unit below
	cacheUnit int64      // index of the unit in cache, -1 for none
	cache     []byte
}

// newStream collects the pieces of attribute typ/name of record num.
func (f *FS) newStream(attrs []*attr, typ uint32, name string, num uint64) (*stream, error) {
	pieces := find(attrs, typ, name)
	if len(pieces) == 0 {
		return nil, fmt.Errorf("%w: record %d has no attribute %#x %q", ErrCorrupt, num, typ, name)
	}
	first := pieces[0]
	s := &stream{f: f, size: first.dataSize, initSize: min(first.initSize, first.dataSize), cacheUnit: -1}
	if first.flags&attrEncrypted != 0 {
		return nil, fmt.Errorf("%w: record %d is encrypted (EFS)", ErrUnsupported, num)
	}
	if first.resident {
		s.resident = first.value
		return s, nil
	}
	if first.lowVCN != 0 {
		return nil, fmt.Errorf("%w: record %d: attribute %#x starts at VCN %d", ErrCorrupt, num, typ, first.lowVCN)
	}
	next := int64(0)
	for _, a := range pieces {
		if a.resident || a.lowVCN != next {
			return nil, fmt.Errorf("%w: record %d: attribute %#x pieces do not join at VCN %d", ErrCorrupt, num, typ, next)
		}
		for _, r := range a.runs {
			if r.lcn >= 0 && (r.lcn+r.length > f.totalClusters || r.lcn+r.length < r.lcn) {
				return nil, fmt.Errorf("%w: record %d: run at cluster %d outside the filesystem", ErrCorrupt, num, r.lcn)
			}
			s.runs = append(s.runs, r)
		}
		if n := len(s.runs); n > 0 {
			next = s.runs[n-1].vcn + s.runs[n-1].length
		}
		if a.highVCN+1 > next {
			next = a.highVCN + 1 // unmapped tail of a piece: a hole
		}
	}
	if first.flags&attrCompressed != 0 && first.compUnit != 0 {
		s.unit = f.clusterSize << first.compUnit
		if s.unit > 1<<24 {
			return nil, fmt.Errorf("%w: record %d: compression unit of %d bytes", ErrCorrupt, num, s.unit)
		}
	}
	return s, nil
}

// readAt reads from the stream; it returns io.EOF when fewer than len(p)
// bytes remain.
func (s *stream) readAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.size-off))
	var err error
	switch {
	case s.resident != nil:
		if off+int64(n) > int64(len(s.resident)) {
			return 0, fmt.Errorf("%w: resident value shorter than its size", ErrCorrupt)
		}
		copy(p, s.resident[off:off+int64(n)])
	case s.unit != 0:
		err = s.readCompressed(p[:n], off)
	default:
		// Up to the initialised size from the clusters, zeros beyond.
		m := int(max(0, min(int64(n), s.initSize-off)))
		if m > 0 {
			err = s.readClusters(p[:m], off)
		}
		clear(p[m:n])
	}
	if err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// runAt returns the index of the run holding vcn, or of the first run
// after it (len(runs) if none).
func (s *stream) runAt(vcn int64) int {
	return sort.Search(len(s.runs), func(i int) bool { return s.runs[i].vcn+s.runs[i].length > vcn })
}

// readClusters fills p from byte off of the uncompressed stream: one device
// read per contiguous run, zeros for sparse runs and unmapped VCNs.
func (s *stream) readClusters(p []byte, off int64) error {
	cs := s.f.clusterSize
	i := s.runAt(off / cs)
	for len(p) > 0 {
		vcn := off / cs
		if i >= len(s.runs) || s.runs[i].vcn > vcn {
			end := int64(len(p))
			if i < len(s.runs) {
				end = min(end, s.runs[i].vcn*cs-off)
			}
			clear(p[:end])
			p, off = p[end:], off+end
			continue
		}
		r := s.runs[i]
		n := min(int64(len(p)), (r.vcn+r.length)*cs-off)
		if r.lcn < 0 {
			clear(p[:n])
		} else if err := s.f.readAt(p[:n], r.lcn*cs+off-r.vcn*cs); err != nil {
			return err
		}
		p, off = p[n:], off+n
		i++
	}
	return nil
}

// readCompressed fills p from byte off of a compressed stream. Each
// compression unit (16 clusters, usually) is stored either in full (not
// compressed), not at all (zeros), or in fewer clusters followed by a
// sparse run: then it is LZNT1-compressed.
func (s *stream) readCompressed(p []byte, off int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(p) > 0 {
		u := off / s.unit
		within := off - u*s.unit
		if err := s.loadUnit(u); err != nil {
			return err
		}
		n := copy(p, s.cache[within:])
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// loadUnit decodes compression unit u into s.cache.
func (s *stream) loadUnit(u int64) error {
	if s.cacheUnit == u {
		return nil
	}
	cs := s.f.clusterSize
	per := s.unit / cs
	if s.cache == nil {
		s.cache = make([]byte, s.unit)
	}
	s.cacheUnit = -1
	first := u * per
	allocated := int64(0)
	for i := s.runAt(first); i < len(s.runs) && s.runs[i].vcn < first+per; i++ {
		r := s.runs[i]
		if r.lcn >= 0 {
			allocated += min(r.vcn+r.length, first+per) - max(r.vcn, first)
		}
	}
	switch {
	case allocated == 0:
		clear(s.cache)
	case allocated >= per:
		if err := s.readClusters(s.cache, u*s.unit); err != nil {
			return err
		}
	default:
		comp := make([]byte, allocated*cs)
		if err := s.readClusters(comp, u*s.unit); err != nil {
			return err
		}
		n, err := decompressLZNT1(s.cache, comp)
		if err != nil {
			return fmt.Errorf("compression unit %d: %w", u, err)
		}
		clear(s.cache[n:])
	}
	// Bytes past the initialised size read as zeros here too.
	if from := s.initSize - u*s.unit; from < s.unit {
		clear(s.cache[max(from, 0):])
	}
	s.cacheUnit = u
	return nil
}
