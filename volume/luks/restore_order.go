package luks

// Header restore in an order a power cut cannot break (issue 31). A
// restore puts the backup's header and keyslot area over the device's,
// where the current header's key material is: written in one go, as
// cryptsetup luksHeaderRestore does, a torn write leaves neither header
// with a whole keyslot, and the volume opens with no password at all (the
// crash explorer found 6,500 of 6,503 torn states so). Here the device
// passes instead through headers that each open on their own, with their
// key material whole, as keyslot changes do:
//
//  1. the backup's bytes go where the current header's keyslots are not
//     (its key material among them), flushed;
//  2. the header switches: LUKS2 one copy, flushed, then the other, the
//     copy the current header does not rely on first (a torn copy fails
//     its checksum and the other is read); LUKS1, whose one header spans
//     two sectors, the sector whose keyslots may go first (a sector is
//     written whole or not at all), each flushed;
//  3. the rest (the current header's old key material) is overwritten,
//     flushed.
//
// When one of the backup's keyslots sits where a current keyslot with
// other key material is, step 1 cannot write it: the device first goes to
// an intermediate header, the backup's with that keyslot's material
// copied to an area neither header uses (LUKS2: its area offset changed;
// LUKS1: the entry moved to a free keyslot), and from there to the
// backup's. Every state a crash leaves is a plain LUKS header that any
// opener, cryptsetup too, reads with the old credentials or the backup's;
// nothing has to be rolled forward, and running the restore again
// finishes it from whatever the device holds.

import (
	"bytes"
	"errors"
	"fmt"
	"sort"

	"github.com/cryptvol/cryptvol/volume"
)

// errNoSafeOrder says that no order of writes keeps a header whole: the
// restore then writes in one go, as cryptsetup does.
var errNoSafeOrder = errors.New("no crash-safe order of writes for this restore")

// restoreStage is an image the device passes through: its bytes (the
// header region), the byte ranges of its key material, and its header
// parts in the order they are switched to it.
type restoreStage struct {
	image  []byte
	used   []interval
	header []interval
}

// writeRestored writes target (the backup's header region, b its parsed
// header) over dev, whose current header is cur (nil when none loads), in
// the order above; warn hears when no such order exists.
func writeRestored(dev volume.Device, cur, b *loaded, target []byte, warn func(string)) error {
	disk, err := readAt(dev, 0, int64(len(target)))
	if err != nil {
		return err
	}
	var stages []restoreStage
	if cur != nil {
		stages, err = planRestore(cur, b, disk, target)
	}
	if cur == nil || err != nil {
		if cur != nil && warn != nil {
			warn(fmt.Sprintf("the header is restored in one write (%v): a crash during it can leave a header no password opens; keep the backup until the command is done", err))
		}
		if err := writeAt(dev, target, 0, false); err != nil {
			return err
		}
		return dev.Sync()
	}
	w := &stagedWriter{dev: dev, disk: disk}
	from := restoreStage{used: usedAreas(cur)}
	for _, st := range stages {
		// Step 1: the stage's bytes wherever the header on the device
		// neither is nor keeps key material.
		keep := append(append([]interval(nil), from.used...), st.header...)
		if err := w.writeExcept(st.image, keep); err != nil {
			return err
		}
		// Step 2: the header parts, one flush each.
		for _, part := range st.header {
			if err := w.writeRange(st.image, part); err != nil {
				return err
			}
		}
		from = st
	}
	// Step 3: everything else, the old key material among it.
	return w.writeExcept(target, nil)
}

// stagedWriter writes the sectors of an image that differ from what the
// device holds, in runs, and flushes after each call that wrote.
type stagedWriter struct {
	dev  volume.Device
	disk []byte // what the device holds now (the header region)
}

// writeExcept writes image everywhere outside skip.
func (w *stagedWriter) writeExcept(image []byte, skip []interval) error {
	return w.write(image, func(s int64) bool { return !inAny(skip, s, restoreSector) })
}

// writeRange writes image's bytes in r.
func (w *stagedWriter) writeRange(image []byte, r interval) error {
	return w.write(image, func(s int64) bool { return s >= int64(r.off) && s < int64(r.off+r.len) })
}

// restoreSector is the unit a disk writes whole (crashsim.SectorSize).
const restoreSector = 512

func (w *stagedWriter) write(image []byte, want func(sector int64) bool) error {
	n := int64(len(image))
	wrote := false
	for s := int64(0); s < n; {
		if !want(s) || bytes.Equal(image[s:min(s+restoreSector, n)], w.disk[s:min(s+restoreSector, n)]) {
			s += restoreSector
			continue
		}
		e := s
		for e < n && want(e) && !bytes.Equal(image[e:min(e+restoreSector, n)], w.disk[e:min(e+restoreSector, n)]) {
			e += restoreSector
		}
		e = min(e, n)
		if err := writeAt(w.dev, image[s:e], s, false); err != nil {
			return err
		}
		copy(w.disk[s:e], image[s:e])
		wrote = true
		s = e
	}
	if !wrote {
		return nil
	}
	return w.dev.Sync()
}

// inAny reports whether [s, s+n) meets one of the intervals.
func inAny(ivs []interval, s, n int64) bool {
	for _, iv := range ivs {
		if s < int64(iv.off+iv.len) && int64(iv.off) < s+n {
			return true
		}
	}
	return false
}

// usedAreas lists the byte ranges of a header's key material: every LUKS2
// keyslot's area, every active LUKS1 keyslot's material.
func usedAreas(l *loaded) []interval {
	var out []interval
	if h := l.v1; h != nil {
		for i, s := range h.Slots {
			if s.Active == luks1SlotEnabled {
				off, n := h.slotMaterial(i)
				out = append(out, interval{uint64(off), uint64(n)})
			}
		}
		return out
	}
	areas, _ := l.v2.meta.areas()
	for _, id := range sortedIDs(areas) {
		out = append(out, areas[id])
	}
	return out
}

// conflicts reports the ranges of next's key material that the device
// (disk) holds other bytes in, under key material of the header it has.
func conflicts(next []interval, image, disk []byte, fromUsed []interval) []interval {
	var out []interval
	for _, a := range next {
		for s := int64(a.off); s < min(int64(a.off+a.len), int64(len(image))); s += restoreSector {
			e := min(s+restoreSector, int64(len(image)))
			if inAny(fromUsed, s, restoreSector) && !bytes.Equal(image[s:e], disk[s:e]) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// planRestore lists the stages from the device's header (cur, its bytes
// disk) to the backup's (b, target).
func planRestore(cur, b *loaded, disk, target []byte) ([]restoreStage, error) {
	if b.v1 != nil {
		return planLUKS1(cur.v1, b.v1, disk, target)
	}
	return planLUKS2(cur.v2, b.v2, disk, target)
}

// luks2Parts is the order a LUKS2 header's copies are switched in: the
// copy the header on the device does not rely on (stale) first.
func luks2Parts(hdrSize uint64, stale int) []interval {
	primary, secondary := interval{0, hdrSize}, interval{hdrSize, hdrSize}
	if stale == 1 {
		return []interval{primary, secondary}
	}
	return []interval{secondary, primary}
}

func planLUKS2(cur, b *luks2Header, disk, target []byte) ([]restoreStage, error) {
	if cur.size() != b.size() {
		return nil, fmt.Errorf("%w: the header sizes differ", errNoSafeOrder)
	}
	hs := b.size()
	final := restoreStage{image: target, used: usedAreas(&loaded{v2: b}), header: luks2Parts(hs, 0)}
	curUsed := usedAreas(&loaded{v2: cur})
	bad := conflicts(final.used, target, disk, curUsed)
	if len(bad) == 0 {
		final.header = luks2Parts(hs, cur.stale)
		return []restoreStage{final}, nil
	}
	// The intermediate header: the backup's, its conflicting keyslots'
	// material in areas neither header uses.
	areas, err := b.meta.areas()
	if err != nil {
		return nil, err
	}
	taken := append(append([]interval(nil), curUsed...), final.used...)
	moved := map[string]uint64{}
	for _, id := range sortedIDs(areas) {
		a := areas[id]
		if !containsInterval(bad, a) {
			continue
		}
		off, ok := freeArea(taken, 2*hs, b.meta.keyslotsEnd(hs), a.len)
		if !ok {
			return nil, fmt.Errorf("%w: no free room in the keyslots area to stage keyslot %s", errNoSafeOrder, id)
		}
		moved[id] = off
		taken = append(taken, interval{off, a.len})
	}
	meta, err := editLUKS2(b, func(raw map[string]any) {
		for id, off := range moved {
			object(object(object(raw, "keyslots"), id), "area")["offset"] = fmt.Sprint(off)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoSafeOrder, err)
	}
	text, err := meta.encode()
	if err != nil {
		return nil, err
	}
	mid := append([]byte(nil), target...)
	for id, off := range moved {
		a := areas[id]
		copy(mid[off:off+a.len], target[a.off:a.off+a.len])
	}
	for i := 0; i < 2; i++ {
		bin := b.bin
		bin.SeqID = max(cur.bin.SeqID, b.bin.SeqID) + 1
		bin.Secondary = i == 1
		bin.Offset = uint64(i) * hs
		bin.Salt = b.salts[i]
		c, err := sealCopy(&bin, text)
		if err != nil {
			return nil, err
		}
		copy(mid[bin.Offset:], c)
	}
	stage := restoreStage{image: mid, used: usedAreas(&loaded{v2: &luks2Header{meta: meta}}), header: luks2Parts(hs, cur.stale)}
	if len(conflicts(stage.used, mid, disk, curUsed)) > 0 || len(conflicts(final.used, target, mid, stage.used)) > 0 {
		return nil, fmt.Errorf("%w: the staged keyslots still collide", errNoSafeOrder)
	}
	return []restoreStage{stage, final}, nil
}

func containsInterval(ivs []interval, a interval) bool {
	for _, iv := range ivs {
		if iv == a {
			return true
		}
	}
	return false
}

// freeArea finds n bytes, 4096-aligned, in [start, end) outside taken.
func freeArea(taken []interval, start, end, n uint64) (uint64, bool) {
	sorted := append([]interval(nil), taken...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].off < sorted[j].off })
	off := start
	for _, a := range sorted {
		if off+n <= a.off {
			break
		}
		if a.off+a.len > off {
			off = (a.off + a.len + 4095) &^ 4095
		}
	}
	return off, off+n <= end
}

// luks1Sectors are the two sectors the 592-byte LUKS1 header spans.
var luks1Sectors = [2]interval{{0, 512}, {512, 512}}

// luks1Parts is the order a LUKS1 header's two sectors are switched in:
// sector 0 holds keyslots 0-5 and the volume key digest, sector 1 keyslot
// 7 and most of 6. Written one at a time, the state between holds sector
// 0 of one header and sector 1 of the other: it opens with the header
// whose sector 0 it has through a keyslot among 0-5. So the sector 1
// goes first when the header on the device has such a keyslot, sector 0
// first when the next one has.
func luks1Parts(from, to *luks1Header) ([]interval, bool) {
	low := func(h *luks1Header) bool {
		for i := 0; i < 6; i++ {
			if h.Slots[i].Active == luks1SlotEnabled {
				return true
			}
		}
		return false
	}
	switch {
	case low(from):
		return []interval{luks1Sectors[1], luks1Sectors[0]}, true
	case low(to):
		return []interval{luks1Sectors[0], luks1Sectors[1]}, true
	}
	return nil, false
}

func planLUKS1(cur, b *luks1Header, disk, target []byte) ([]restoreStage, error) {
	for i := range cur.Slots {
		if cur.Slots[i].Offset != b.Slots[i].Offset || cur.Slots[i].Stripes != b.Slots[i].Stripes {
			return nil, fmt.Errorf("%w: the keyslots lie elsewhere in the backup", errNoSafeOrder)
		}
	}
	curUsed := usedAreas(&loaded{v1: cur})
	finalUsed := usedAreas(&loaded{v1: b})
	if len(conflicts(finalUsed, target, disk, curUsed)) == 0 {
		if parts, ok := luks1Parts(cur, b); ok {
			return []restoreStage{{image: target, used: finalUsed, header: parts}}, nil
		}
	}
	// The intermediate header: the backup's, each keyslot whose material
	// collides with the device's moved to a keyslot neither uses, low
	// numbers first (so that the header switches have a keyslot in 0-5).
	mid := *b
	image := append([]byte(nil), target...)
	free := func(i int) bool {
		return cur.Slots[i].Active != luks1SlotEnabled && mid.Slots[i].Active != luks1SlotEnabled
	}
	for k := range b.Slots {
		if b.Slots[k].Active != luks1SlotEnabled {
			continue
		}
		off, n := b.slotMaterial(k)
		a := interval{uint64(off), uint64(n)}
		if len(conflicts([]interval{a}, target, disk, curUsed)) == 0 {
			continue
		}
		j := -1
		for i := range mid.Slots {
			if free(i) {
				j = i
				break
			}
		}
		if j < 0 {
			return nil, fmt.Errorf("%w: no free keyslot to stage keyslot %d in", errNoSafeOrder, k)
		}
		mid.Slots[j] = b.Slots[k]
		mid.Slots[j].Offset = b.Slots[j].Offset
		mid.Slots[k] = luks1Slot{Active: luks1SlotDisabled, Offset: b.Slots[k].Offset, Stripes: b.Slots[k].Stripes}
		to, _ := b.slotMaterial(j)
		copy(image[to:to+n], target[off:off+n])
	}
	copy(image, mid.marshal())
	first, ok1 := luks1Parts(cur, &mid)
	second, ok2 := luks1Parts(&mid, b)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("%w: neither header has a keyslot among 0-5", errNoSafeOrder)
	}
	stage := restoreStage{image: image, used: usedAreas(&loaded{v1: &mid}), header: first}
	final := restoreStage{image: target, used: finalUsed, header: second}
	if len(conflicts(stage.used, image, disk, curUsed)) > 0 || len(conflicts(final.used, target, image, stage.used)) > 0 {
		return nil, fmt.Errorf("%w: the staged keyslots still collide", errNoSafeOrder)
	}
	return []restoreStage{stage, final}, nil
}
