package luks

import (
	"fmt"
	"io"
	"sort"

	"github.com/cryptvol/cryptvol/volume"
)

// Moving keyslot material under a LUKS1 header, for the conversions.
//
// cryptsetup's conversions shift the whole keyslot area by convertShift:
// a LUKS1 keyslot at offset o becomes a LUKS2 area at o+convertShift, and
// back. Both tools must lay the keyslots out that way, or each refuses the
// other's result (LUKS1 to LUKS2 needs the lowest keyslot at 4096 and 28
// KiB free after the last; LUKS2 to LUKS1 places the free LUKS1 keyslots
// by first fit). cryptsetup moves everything in one overlapping copy, so a
// crash in it loses keyslots. Here each keyslot in use moves on its own,
// under a LUKS1 header that points at a complete copy of it at every
// moment: the material is copied to a place no keyslot uses, then the
// header is rewritten to point there. A shift is shorter than the
// material, so a keyslot first goes to a free place elsewhere and from
// there to its target; only where the keyslot area has no free place big
// enough (all eight keyslots in use) is it copied over itself, which
// cryptsetup does for every keyslot.

// convertShift is where cryptsetup's conversions move the keyslots: the
// two 16 KiB LUKS2 header copies take the first 32 KiB, where LUKS1's
// keyslots start at 4096.
const convertShift = 2*minHeaderSize - luks1AlignKeyslots

// relocStep copies one keyslot's material from one place to another, then
// points the LUKS1 header there (with the free keyslots' places in pos).
type relocStep struct {
	slot     int
	from, to int64
	pos      [luks1NumKeys]int64 // every keyslot's offset afterwards
	inPlace  bool                // to overlaps from: not crash-safe
}

// luks1Layout is what the planner knows of a LUKS1 keyslot area.
type luks1Layout struct {
	active [luks1NumKeys]bool
	n      int64 // bytes of key material per keyslot
	low    int64 // lowest offset a keyslot may take
	limit  int64 // the keyslots end here (the data, or the header's end)
}

func (l *luks1Layout) overlaps(a, b int64) bool { return a < b+l.n && b < a+l.n }

// valid reports whether pos puts every keyslot, in use or not, inside the
// area without overlaps, as LUKS1 readers require.
func (l *luks1Layout) valid(pos [luks1NumKeys]int64) bool {
	for i, p := range pos {
		if p < l.low || p+l.n > l.limit || p%512 != 0 {
			return false
		}
		for j := i + 1; j < len(pos); j++ {
			if l.overlaps(p, pos[j]) {
				return false
			}
		}
	}
	return true
}

// placeFree gives the free keyslots of pos places that overlap nothing:
// each keeps its place if it can (fewer header bytes change); the others
// take the lowest free 4096-aligned places, clear of every place in old
// too if possible (the places of the header on disk: then the header can
// change one sector at a time, each intermediate valid), failing that
// wherever there is room, and failing that all free keyslots move. ok is
// false if there is no room.
func (l *luks1Layout) placeFree(pos [luks1NumKeys]int64, old []int64) (out [luks1NumKeys]int64, ok bool) {
	if out, ok = l.fitFree(pos, true, old); ok {
		return out, true
	}
	if out, ok = l.fitFree(pos, true, nil); ok {
		return out, true
	}
	return l.fitFree(pos, false, nil)
}

func (l *luks1Layout) fitFree(pos [luks1NumKeys]int64, keep bool, avoid []int64) (out [luks1NumKeys]int64, ok bool) {
	out = pos
	var placed []int64
	for i := range out {
		if l.active[i] {
			placed = append(placed, out[i])
		}
	}
	free := func(p int64) bool {
		if p < l.low || p+l.n > l.limit {
			return false
		}
		for _, q := range placed {
			if l.overlaps(p, q) {
				return false
			}
		}
		return true
	}
	var homeless []int
	for i := range out {
		if l.active[i] {
			continue
		}
		if keep && free(out[i]) {
			placed = append(placed, out[i])
		} else {
			homeless = append(homeless, i)
		}
	}
	placed = append(placed, avoid...)
	for _, i := range homeless {
		p := (l.low + 4095) &^ 4095
		for ; p+l.n <= l.limit && !free(p); p += 4096 {
		}
		if p+l.n > l.limit {
			return out, false
		}
		out[i] = p
		placed = append(placed, p)
	}
	return out, true
}

// planMoves plans the steps that take the keyslots in use from pos to
// their targets, every LUKS1 header on the way valid. It writes nothing.
func (l *luks1Layout) planMoves(pos [luks1NumKeys]int64, target map[int]int64) ([]relocStep, error) {
	var steps []relocStep
	step := func(k int, to int64, inPlace bool) error {
		next := pos
		next[k] = to
		next, ok := l.placeFree(next, pos[:])
		if !ok {
			return fmt.Errorf("no room for the free keyslots while keyslot %d moves to %d", k, to)
		}
		steps = append(steps, relocStep{slot: k, from: pos[k], to: to, pos: next, inPlace: inPlace})
		pos = next
		return nil
	}
	// clear reports whether [at, at+n) overlaps no keyslot in use but k
	// (and not k either if self).
	clear := func(at int64, k int, self bool) bool {
		for j := range pos {
			if l.active[j] && (j != k || self) && l.overlaps(at, pos[j]) {
				return false
			}
		}
		return true
	}
	for {
		var pending []int
		for k, t := range target {
			if pos[k] != t {
				pending = append(pending, k)
			}
		}
		if len(pending) == 0 {
			return steps, nil
		}
		// The keyslots all move the same way: the one furthest ahead
		// first, so that the layout stays what it was (with room for the
		// free keyslots) behind it and becomes the target ahead of it.
		sort.Slice(pending, func(a, b int) bool {
			pa, pb := pos[pending[a]], pos[pending[b]]
			if target[pending[a]] > pa {
				return pa > pb
			}
			return pa < pb
		})
		k := -1
		for _, c := range pending {
			if clear(target[c], c, false) {
				k = c
				break
			}
		}
		if k < 0 {
			return nil, fmt.Errorf("keyslots %v block each other's places", pending)
		}
		t := target[k]
		if !l.overlaps(t, pos[k]) {
			if err := step(k, t, false); err != nil {
				return nil, err
			}
			continue
		}
		// A free place on the way, clear of the keyslots in use (k's
		// present place too), of k's target, and leaving room for the
		// free keyslots.
		via := int64(-1)
		for p := (l.low + 4095) &^ 4095; p+l.n <= l.limit; p += 4096 {
			if !clear(p, k, true) || l.overlaps(p, t) {
				continue
			}
			next := pos
			next[k] = p
			if _, ok := l.placeFree(next, pos[:]); ok {
				via = p
				break
			}
		}
		if via < 0 {
			if err := step(k, t, true); err != nil {
				return nil, err
			}
			continue
		}
		if err := step(k, via, false); err != nil {
			return nil, err
		}
		if err := step(k, t, false); err != nil {
			return nil, err
		}
	}
}

// moveKeyslots performs the steps on dev, whose LUKS1 header is h: each
// keyslot's material is on disk at its new place before the header points
// there. h ends up as written last. It returns the places the material
// left, for wiping once nothing refers to them.
func moveKeyslots(dev volume.Device, h *luks1Header, n int64, steps []relocStep) ([]int64, error) {
	var left []int64
	for _, s := range steps {
		material, err := readAt(dev, s.from, n)
		if err != nil {
			return nil, err
		}
		err = writeAt(dev, material, s.to, false)
		clear(material)
		if err != nil {
			return nil, err
		}
		if err := dev.Sync(); err != nil {
			return nil, err
		}
		next := *h
		for i, p := range s.pos {
			next.Slots[i].Offset = uint32(p / 512)
		}
		if err := rewriteLUKS1(dev, h, &next); err != nil {
			return nil, err
		}
		*h = next
		left = append(left, s.from)
	}
	return left, nil
}

// rewriteLUKS1 replaces the LUKS1 header old on dev by next, one 512-byte
// sector at a time (a sector is written whole or not at all), the
// changed sectors in an order whose intermediate header is valid.
func rewriteLUKS1(dev volume.Device, old, next *luks1Header) error {
	a, b := sectors1(old), sectors1(next)
	var changed []int
	for i := range b {
		if string(a[i]) != string(b[i]) {
			changed = append(changed, i)
		}
	}
	if len(changed) == 2 {
		// The first sector new and the second old, or the other way.
		firstNew := append(append([]byte{}, b[0]...), a[1]...)
		secondNew := append(append([]byte{}, a[0]...), b[1]...)
		if _, err := parseLUKS1(firstNew, dev.Size()); err != nil {
			if _, err := parseLUKS1(secondNew, dev.Size()); err == nil {
				changed = []int{1, 0}
			}
		}
	}
	for _, i := range changed {
		if err := writeAt(dev, b[i], int64(i)*512, false); err != nil {
			return err
		}
		if err := dev.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// sectors1 is the LUKS1 header's two sectors.
func sectors1(h *luks1Header) [2][]byte {
	raw := make([]byte, 1024)
	copy(raw, h.marshal())
	return [2][]byte{raw[:512], raw[512:]}
}

// wipeLeft wipes what the keyslots left behind at the places in left
// (n bytes each), except where keyslots in use are now and below keep
// (the headers).
func wipeLeft(dev volume.Device, left []int64, n int64, inUse []int64, keep int64, rnd io.Reader) error {
	for _, off := range left {
		parts := [][2]int64{{max(off, keep), off + n}}
		for _, u := range inUse {
			var rest [][2]int64
			for _, p := range parts {
				if p[0] < u {
					rest = append(rest, [2]int64{p[0], min(p[1], u)})
				}
				if p[1] > u+n {
					rest = append(rest, [2]int64{max(p[0], u+n), p[1]})
				}
			}
			parts = rest
		}
		for _, p := range parts {
			if p[1] > p[0] {
				if err := wipe(dev, p[0], p[1]-p[0], rnd); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
