package archive

import (
	"errors"
	"hash/maphash"
	"slices"
	"sort"
	"unsafe"
)

// The in-memory index. A million members must fit comfortably, so it holds
// no pointers per member (the garbage collector never scans it) and no Go
// map: names live in one byte slab, members in one slice of fixed-size
// records in the order they were added (which is commit order, so the
// members of the newest commits are a suffix of it), and an open-addressing
// table of 32-bit positions finds a name. About 64 bytes plus the name per
// member, plus 4 to 8 bytes of table.

// entry is one member (or a dead slot a later commit replaced or removed).
type entry struct {
	offset  int64 // record offset (files)
	size    int64
	mtime   int64 // ns since the Unix epoch
	gen     uint64
	nameOff uint32
	nameLen uint16
	kind    uint8 // opFile or opDir
	dead    bool
	mode    uint32 // Unix permission bits
	nonce   [16]byte
}

// tomb is a deletion recorded in a run that is not the base: it must be
// written again when that run is merged, until a base absorbs it.
type tomb struct {
	name string
	gen  uint64
}

type index struct {
	names []byte
	ents  []entry
	slots []uint32 // 0 = empty, else position in ents + 1
	live  int
	seed  maphash.Seed
	tombs []tomb // gen ascending
}

var errIndexFull = errors.New("archive index full: names exceed 4 GiB")

func newIndex() *index { return newIndexSized(0, 0) }

// newIndexSized makes room for members members and nameBytes of names up
// front, so that loading a large index does not grow and rehash as it goes.
func newIndexSized(members, nameBytes int) *index {
	return &index{
		seed:  maphash.MakeSeed(),
		slots: make([]uint32, tableSize(members)),
		ents:  make([]entry, 0, members),
		names: make([]byte, 0, nameBytes),
	}
}

// tableSize is the slot count for n members: a power of two, at most half
// full.
func tableSize(n int) int {
	size := 16
	for size < 2*n+2 {
		size *= 2
	}
	return size
}

func (x *index) nameOf(e *entry) []byte {
	return x.names[e.nameOff : e.nameOff+uint32(e.nameLen)]
}

func (x *index) hash(name []byte) uint64 { return maphash.Bytes(x.seed, name) }

// find returns the position of the live member name, or -1.
func (x *index) find(name []byte) int { return x.findHashed(name, x.hash(name)) }

func (x *index) findHashed(name []byte, h uint64) int {
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			return -1
		}
		e := &x.ents[s-1]
		if int(e.nameLen) == len(name) && string(x.nameOf(e)) == string(name) {
			return int(s - 1)
		}
	}
}

func (x *index) findString(name string) int {
	// The conversion does not allocate: the compiler sees the slice does
	// not escape find.
	return x.find([]byte(name))
}

// slotOf returns the table slot that holds position pos.
func (x *index) slotOf(pos int) uint64 {
	mask := uint64(len(x.slots) - 1)
	for i := x.hash(x.nameOf(&x.ents[pos])) & mask; ; i = (i + 1) & mask {
		if x.slots[i] == uint32(pos+1) {
			return i
		}
	}
}

func (x *index) insertSlot(pos int) { x.insertHashed(pos, x.hash(x.nameOf(&x.ents[pos]))) }

func (x *index) insertHashed(pos int, h uint64) {
	mask := uint64(len(x.slots) - 1)
	i := h & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = uint32(pos + 1)
}

// removeSlot empties slot i and shifts the following cluster back so that
// every member stays reachable from its home slot (no tombstones).
func (x *index) removeSlot(i uint64) {
	mask := uint64(len(x.slots) - 1)
	x.slots[i] = 0
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		home := x.hash(x.nameOf(&x.ents[x.slots[j]-1])) & mask
		// Move slots[j] to the hole at i if its home is not in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			x.slots[i], x.slots[j] = x.slots[j], 0
			i = j
		}
	}
}

func (x *index) rehash(size int) {
	x.slots = make([]uint32, size)
	for pos := range x.ents {
		if !x.ents[pos].dead {
			x.insertSlot(pos)
		}
	}
}

// reserve makes room for n more members with nameBytes of names, so a
// large commit grows the index once.
func (x *index) reserve(n, nameBytes int) {
	x.ents = slices.Grow(x.ents, n)
	x.names = slices.Grow(x.names, nameBytes)
	if size := tableSize(x.live + n); size > len(x.slots) {
		x.rehash(size)
	}
}

// put adds the member o describes, replacing a live member of that name.
func (x *index) put(o *op) error {
	if uint64(len(x.names))+uint64(len(o.name)) > 1<<32-1 || uint64(len(x.ents)) >= 1<<32-2 {
		return errIndexFull
	}
	h := x.hash(o.name)
	if pos := x.findHashed(o.name, h); pos >= 0 {
		x.kill(pos)
	}
	if (x.live+1)*2 > len(x.slots) {
		x.rehash(len(x.slots) * 2)
	}
	x.ents = append(x.ents, entry{
		offset: o.offset, size: o.size, mtime: o.mtime, gen: o.gen,
		nameOff: uint32(len(x.names)), nameLen: uint16(len(o.name)),
		kind: o.kind, mode: o.mode, nonce: o.nonce,
	})
	x.names = append(x.names, o.name...)
	x.insertHashed(len(x.ents)-1, h)
	x.live++
	return nil
}

func (x *index) kill(pos int) {
	x.removeSlot(x.slotOf(pos))
	x.ents[pos].dead = true
	x.live--
}

// del removes name; it records a tombstone unless the deletion lands in a
// base. It reports whether the member existed.
func (x *index) del(name []byte, gen uint64, base bool) bool {
	pos := x.find(name)
	if pos >= 0 {
		x.kill(pos)
	}
	if !base {
		x.tombs = append(x.tombs, tomb{string(name), gen})
	}
	return pos >= 0
}

// since returns the first position whose generation is gen or later.
func (x *index) since(gen uint64) int {
	return sort.Search(len(x.ents), func(i int) bool { return x.ents[i].gen >= gen })
}

// tombsSince returns the tombstones of generation gen or later.
func (x *index) tombsSince(gen uint64) []tomb {
	i := sort.Search(len(x.tombs), func(i int) bool { return x.tombs[i].gen >= gen })
	return x.tombs[i:]
}

// tidy drops dead slots once they outnumber live ones, keeping order.
func (x *index) tidy() {
	dead := len(x.ents) - x.live
	if dead < 1024 || dead < x.live {
		return
	}
	names := make([]byte, 0, len(x.names)/2)
	ents := make([]entry, 0, x.live+x.live/4)
	for i := range x.ents {
		e := x.ents[i]
		if e.dead {
			continue
		}
		n := x.nameOf(&e)
		e.nameOff = uint32(len(names))
		names = append(names, n...)
		ents = append(ents, e)
	}
	x.names, x.ents = names, ents
	x.rehash(tableSize(x.live))
}

// memoryBytes is what the index holds, for tests and the benchmark.
func (x *index) memoryBytes() int {
	return cap(x.names) + cap(x.ents)*int(entrySize) + 4*len(x.slots)
}

// entrySize is the in-memory size of one member record.
const entrySize = unsafe.Sizeof(entry{})
