package luks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
)

// Conversion between LUKS1 and LUKS2 (cryptsetup convert --type luks2 |
// luks1), with the same metadata cryptsetup writes, the keyslot material
// reused byte for byte (a LUKS2 "luks2" keyslot of af type "luks1" holds
// exactly what a LUKS1 keyslot holds) and the same refusals.
//
// cryptsetup moves the whole keyslot area by 28 KiB, overlapping itself,
// so a crash in the middle loses keyslots. Here nothing that opens the
// volume is overwritten before its replacement is on disk:
//
//   - LUKS1 to LUKS2: the two 16 KiB LUKS2 header copies need the first
//     32 KiB, where LUKS1 keeps the start of keyslot 0's material. That
//     material is first copied to a free keyslot's place and the LUKS1
//     header's first sector (one atomic write) swaps the two keyslots'
//     offsets; every other keyslot stays where it is, its LUKS2 area being
//     its LUKS1 place. Then the secondary LUKS2 copy is written (it covers
//     nothing LUKS1 still uses), then the primary: until the primary's
//     first sector lands the volume is the intact LUKS1 one, and a torn
//     primary leaves the valid secondary, which readers find.
//   - LUKS2 to LUKS1: the keyslot material stays where it is (LUKS1 takes
//     any offsets). The LUKS1 header's second sector is written first,
//     which only spoils the LUKS2 primary copy (the secondary still opens
//     the volume), then its first sector switches the volume to LUKS1; the
//     LUKS2 remnants are wiped last.

// ConvertOptions tune a conversion.
type ConvertOptions struct {
	// Rand is the randomness source (LUKS2 header salts, wiping); nil
	// means crypto/rand.
	Rand io.Reader
	// Warn hears about what the target format drops (a LUKS2 label,
	// activation flags, keyslot priorities).
	Warn func(string)
}

func (o *ConvertOptions) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}

// ErrCannotConvert refuses a conversion the target format cannot hold.
var ErrCannotConvert = errors.New("cannot convert")

// ErrAlreadyType is returned when the header already is of the type asked
// for; nothing is written.
var ErrAlreadyType = errors.New("the header already has this format")

func cannot(to string, format string, a ...any) error {
	return fmt.Errorf("%w to %s: %s", ErrCannotConvert, strings.ToUpper(to), fmt.Sprintf(format, a...))
}

// Convert rewrites the LUKS header on hdr (the volume, or its detached
// header) in the format to ("luks2" or "luks1"). No passphrase is needed:
// the keyslots and the volume key digest carry over as they are, so every
// passphrase that opened the volume opens it afterwards, and the data is
// untouched.
func Convert(ctx context.Context, hdr volume.Device, to string, o ConvertOptions) error {
	l, err := load(hdr, "luks")
	if err != nil {
		return err
	}
	if err := checkWritable(l); err != nil {
		return err
	}
	g, err := watch(hdr, l)
	if err != nil {
		return err
	}
	rnd := orRand(o.Rand)
	switch strings.ToLower(to) {
	case "luks2":
		if l.v2 != nil {
			return fmt.Errorf("%w: it is LUKS2", ErrAlreadyType)
		}
		return luks1ToLUKS2(g, l.v1, rnd)
	case "luks1":
		if l.v1 != nil {
			return fmt.Errorf("%w: it is LUKS1", ErrAlreadyType)
		}
		return luks2ToLUKS1(g, l.v2, &o, rnd)
	}
	return fmt.Errorf("unknown LUKS type %q (want luks1 or luks2)", to)
}

// luks1MetaMagic is the luksmeta package's mark after the LUKS1 area
// (clevis bindings); LUKS2 would cover it, so cryptsetup refuses.
var luks1MetaMagic = []byte("LUKSMETA")

func luks1ToLUKS2(dev volume.Device, h *luks1Header, rnd io.Reader) error {
	if h.specErr != nil {
		return h.specErr
	}
	const hdrSize = minHeaderSize
	end := (h.areaEnd() + 4095) &^ 4095
	if m, err := readAt(dev, end, int64(len(luks1MetaMagic))); err == nil && string(m) == string(luks1MetaMagic) {
		return cannot("luks2", "the header has LUKSMETA metadata (clevis) after its keyslots, which LUKS2 would overwrite")
	}
	// The keyslots area runs up to the data (or, for a detached header,
	// the end of the header file).
	limit := int64(h.PayloadOff) * 512
	if limit == 0 {
		limit = dev.Size()
	}
	ksSize := min(limit-2*hdrSize, maxKeyslotsSize) &^ 4095
	if ksSize <= 0 {
		return cannot("luks2", "the data starts at %d, leaving no room for the two %d-byte LUKS2 header copies", limit, hdrSize)
	}
	ksEnd := 2*hdrSize + ksSize
	n := afSectors(int(h.KeyBytes), luks1Stripes) * 512
	area := int64(luks2AreaSize(int(h.KeyBytes), luks1Stripes))
	usable := func(off int64) bool { return off >= 2*hdrSize && off%4096 == 0 && off+area <= ksEnd }

	// Keyslots whose material lies under the LUKS2 headers (or is not
	// where a LUKS2 area can be) trade places with a free keyslot.
	next := *h
	type move struct{ from, to int64 }
	var moves []move
	for i := range next.Slots {
		if next.Slots[i].Active != luks1SlotEnabled {
			continue
		}
		off, _ := next.slotMaterial(i)
		if usable(off) && !overlapsActive(&next, i, off, area) {
			continue
		}
		j := freeSlotFor(&next, i, area, usable)
		if j < 0 {
			return cannot("luks2", "keyslot %d's material lies where the LUKS2 header goes (bytes %d..%d) and no free keyslot in the header's first sector (1 to 5) has a place for it: remove a keyslot first", i, off, off+n)
		}
		dst, _ := next.slotMaterial(j)
		moves = append(moves, move{off, dst})
		next.Slots[i].Offset, next.Slots[j].Offset = next.Slots[j].Offset, next.Slots[i].Offset
	}
	meta, err := luks2MetaFromLUKS1(&next, hdrSize, ksSize, area)
	if err != nil {
		return err
	}
	if len(moves) > 0 {
		for _, m := range moves {
			material, err := readAt(dev, m.from, n)
			if err != nil {
				return err
			}
			err = writeAt(dev, material, m.to, false)
			clear(material)
			if err != nil {
				return err
			}
		}
		if err := dev.Sync(); err != nil {
			return err
		}
		// The keyslot descriptors 0..5 lie in the first sector: one
		// atomic write swaps the offsets.
		if err := writeAt(dev, next.marshal()[:512], 0, false); err != nil {
			return err
		}
		if err := dev.Sync(); err != nil {
			return err
		}
	}
	h2 := &luks2Header{bin: binHeader{Size: hdrSize, CsumAlg: "sha256", UUID: h.UUID}}
	if err := commitLUKS2Secondary1st(dev, h2, meta, rnd); err != nil {
		return err
	}
	// What the moved keyslots left in the keyslots area is stale key
	// material: wipe it (the part under the headers is gone already).
	for _, m := range moves {
		if e := m.from + n; e > 2*hdrSize {
			s := max(m.from, 2*hdrSize)
			if err := wipe(dev, s, e-s, rnd); err != nil {
				return err
			}
		}
	}
	return dev.Sync()
}

// overlapsActive reports whether [off, off+n) overlaps the material of an
// active keyslot other than i.
func overlapsActive(h *luks1Header, i int, off, n int64) bool {
	for j := range h.Slots {
		if j == i || h.Slots[j].Active != luks1SlotEnabled {
			continue
		}
		o, m := h.slotMaterial(j)
		if off < o+m && o < off+n {
			return true
		}
	}
	return false
}

// freeSlotFor finds an inactive keyslot among 1..5 (their descriptors lie
// in the header's first sector with keyslot 0's) whose place can hold
// keyslot i's LUKS2 area, or -1.
func freeSlotFor(h *luks1Header, i int, area int64, usable func(int64) bool) int {
	if i > 5 {
		return -1
	}
	for j := 5; j >= 0; j-- {
		if j == i || h.Slots[j].Active == luks1SlotEnabled {
			continue
		}
		off, _ := h.slotMaterial(j)
		if usable(off) && !overlapsActive(h, i, off, area) {
			return j
		}
	}
	return -1
}

// luks2MetaFromLUKS1 builds the LUKS2 metadata cryptsetup's conversion
// writes for h, every active keyslot's area at its LUKS1 place.
func luks2MetaFromLUKS1(h *luks1Header, hdrSize, ksSize, area int64) (*metadata, error) {
	cipher := h.CipherName
	if h.CipherMode != "" {
		cipher += "-" + h.CipherMode
	}
	b64 := base64.StdEncoding.EncodeToString
	keyslots := map[string]any{}
	var ids []any
	for i, s := range h.Slots {
		if s.Active != luks1SlotEnabled {
			continue
		}
		off, _ := h.slotMaterial(i)
		id := fmt.Sprint(i)
		ids = append(ids, id)
		keyslots[id] = map[string]any{
			"type":     "luks2",
			"key_size": int64(h.KeyBytes),
			"af":       map[string]any{"type": "luks1", "stripes": int64(luks1Stripes), "hash": h.HashSpec},
			"area": map[string]any{"type": "raw", "offset": fmt.Sprint(off), "size": fmt.Sprint(area),
				"encryption": cipher, "key_size": int64(h.KeyBytes)},
			"kdf": map[string]any{"type": "pbkdf2", "hash": h.HashSpec, "iterations": int64(s.Iterations), "salt": b64(s.Salt[:])},
		}
	}
	if ids == nil {
		ids = []any{}
	}
	raw := map[string]any{
		"keyslots": keyslots,
		"tokens":   map[string]any{},
		"segments": map[string]any{"0": map[string]any{
			"type": "crypt", "offset": fmt.Sprint(int64(h.PayloadOff) * 512), "size": "dynamic", "iv_tweak": "0",
			"encryption": cipher, "sector_size": int64(512),
		}},
		"digests": map[string]any{"0": map[string]any{
			"type": "pbkdf2", "keyslots": ids, "segments": []any{"0"}, "hash": h.HashSpec,
			"iterations": int64(h.MKDigestIter), "salt": b64(h.MKDigestSalt[:]), "digest": b64(h.MKDigest[:]),
		}},
		"config": map[string]any{"json_size": fmt.Sprint(hdrSize - binHeaderSize), "keyslots_size": fmt.Sprint(ksSize)},
	}
	meta, err := (&metadata{raw: raw}).reparse(uint64(hdrSize))
	if err != nil {
		return nil, cannot("luks2", "the LUKS1 header does not map to valid LUKS2 metadata: %v", err)
	}
	return meta, nil
}

// commitLUKS2Secondary1st writes meta as a new LUKS2 header, the
// secondary copy first: over a LUKS1 header, the primary's first sector
// is what turns the volume into a LUKS2 one.
func commitLUKS2Secondary1st(dev volume.Device, h *luks2Header, meta *metadata, rnd io.Reader) error {
	text, err := meta.encode()
	if err != nil {
		return err
	}
	h.bin.SeqID = 1
	var copies [2][]byte
	for i := range copies {
		b := h.bin
		b.Secondary = i == 1
		b.Offset = 0
		if b.Secondary {
			b.Offset = b.Size
		}
		s, err := randomBytes(rnd, hdrSaltLen)
		if err != nil {
			return err
		}
		copy(b.Salt[:], s)
		if copies[i], err = sealCopy(&b, text); err != nil {
			return err
		}
	}
	if err := writeAt(dev, copies[1], int64(h.bin.Size), false); err != nil {
		return err
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	if err := writeAt(dev, copies[0], 0, false); err != nil {
		return err
	}
	return dev.Sync()
}

func luks2ToLUKS1(dev volume.Device, h *luks2Header, o *ConvertOptions, rnd io.Reader) error {
	d := &h.meta.doc
	if len(d.Tokens) > 0 {
		return cannot("luks1", "the LUKS2 header holds %d token(s), which LUKS1 has no place for", len(d.Tokens))
	}
	if len(d.Digests) != 1 {
		return cannot("luks1", "the header has %d volume key digests (unbound keys); LUKS1 holds one", len(d.Digests))
	}
	seg, err := h.dataSegment()
	if err != nil {
		return cannot("luks1", "%v", err)
	}
	js := d.Segments[seg.ID]
	switch {
	case seg.SectorSize != 512:
		return cannot("luks1", "the data uses %d-byte encryption sectors; LUKS1 has only 512-byte ones (re-encrypt with --sector-size 512 first)", seg.SectorSize)
	case seg.IVTweak != 0:
		return cannot("luks1", "the data segment has an IV tweak of %d; LUKS1 has none", seg.IVTweak)
	case seg.Size != 0:
		return cannot("luks1", "the data segment has a fixed size (%d bytes); a LUKS1 data area runs to the end of the device", seg.Size)
	case len(js.Flags) > 0:
		return cannot("luks1", "the data segment has flags %v", js.Flags)
	case seg.Offset%512 != 0 || seg.Offset/512 > 1<<32-1:
		return cannot("luks1", "the data offset %d cannot be written in LUKS1", seg.Offset)
	}
	dg := d.Digests[seg.Digest]
	salt, _ := decodeB64(dg.Salt)
	digest, _ := decodeB64(dg.Digest)
	if dg.Type != "pbkdf2" || len(salt) != luks1SaltSize || len(digest) < luks1DigestSize || dg.Iterations > 1<<32-1 {
		return cannot("luks1", "the volume key digest (%s, %d-byte salt, %d-byte digest) is not LUKS1's PBKDF2 one", dg.Type, len(salt), len(digest))
	}
	hash := dg.Hash
	keyBytes := h.volumeKeySize(seg.Digest)
	nh := &luks1Header{
		CipherName: seg.Spec.Cipher, CipherMode: seg.Spec.Mode(), HashSpec: hash,
		PayloadOff: uint32(seg.Offset / 512), KeyBytes: uint32(keyBytes),
		MKDigestIter: uint32(dg.Iterations), UUID: h.bin.UUID,
	}
	if strings.HasPrefix(strings.ToLower(seg.SpecText), "capi:") {
		return cannot("luks1", "the cipher %s is in the kernel's capi: form, which LUKS1 cannot name", seg.SpecText)
	}
	copy(nh.MKDigest[:], digest)
	copy(nh.MKDigestSalt[:], salt)
	perSlot := afSectors(keyBytes, luks1Stripes) * 512
	areas, err := h.meta.areas()
	if err != nil {
		return err
	}
	used := map[int]bool{}
	for _, id := range sortedIDs(d.Keyslots) {
		k := d.Keyslots[id]
		i := atoiID(id)
		ksalt := []byte(nil)
		if k.KDF != nil {
			ksalt, _ = decodeB64(k.KDF.Salt)
		}
		a := areas[id]
		switch {
		case i >= luks1NumKeys:
			return cannot("luks1", "keyslot %d is in use; LUKS1 has keyslots 0 to 7 only", i)
		case k.Type != "luks2":
			return cannot("luks1", "keyslot %d is a %q keyslot", i, k.Type)
		case k.KDF.Type != "pbkdf2":
			return cannot("luks1", "keyslot %d uses %s; LUKS1 keyslots use PBKDF2 only (add a PBKDF2 keyslot and remove this one first)", i, k.KDF.Type)
		case k.KDF.Hash != hash || k.AF.Hash != hash:
			return cannot("luks1", "keyslot %d uses the hash %s/%s where the volume key digest uses %s; LUKS1 has one hash for all", i, k.KDF.Hash, k.AF.Hash, hash)
		case k.AF.Stripes != luks1Stripes:
			return cannot("luks1", "keyslot %d has %d anti-forensic stripes; LUKS1 uses %d", i, k.AF.Stripes, luks1Stripes)
		case int(*k.KeySize) != keyBytes || k.Area.KeySize != int64(keyBytes):
			return cannot("luks1", "keyslot %d's key is not the volume key's size", i)
		case !sameSpec(k.Area.Encryption, seg.Spec):
			return cannot("luks1", "keyslot %d's material is encrypted with %s, the data with %s; LUKS1 uses the data cipher for both", i, k.Area.Encryption, seg.Spec)
		case len(ksalt) != luks1SaltSize || k.KDF.Iterations > 1<<32-1:
			return cannot("luks1", "keyslot %d's KDF salt or iteration count does not fit LUKS1", i)
		case a.off%512 != 0 || a.len < uint64(perSlot):
			return cannot("luks1", "keyslot %d's area is not sector-aligned or too small", i)
		}
		if dgk, _ := h.meta.digestOf(id); dgk != seg.Digest {
			return cannot("luks1", "keyslot %d holds a key that is not the volume key", i)
		}
		if keyslotPriority(k) != 1 {
			o.warn(fmt.Sprintf("keyslot %d's priority is lost: LUKS1 tries every keyslot alike", i))
		}
		s := &nh.Slots[i]
		s.Active, s.Iterations, s.Stripes = luks1SlotEnabled, uint32(k.KDF.Iterations), luks1Stripes
		copy(s.Salt[:], ksalt)
		used[i] = true
	}
	if h.bin.Label != "" || h.bin.Subsystem != "" {
		o.warn(fmt.Sprintf("the label %q and subsystem %q are dropped: LUKS1 has none", h.bin.Label, h.bin.Subsystem))
	}
	if c := d.Config; c != nil && len(c.Flags) > 0 {
		o.warn(fmt.Sprintf("the activation flags %v are dropped: LUKS1 has none", c.Flags))
	}
	// Everything checked: from here on the header changes.
	if err := clearLowPlace(dev, h, (perSlot+4095)&^4095, rnd); err != nil {
		return err
	}
	if areas, err = h.meta.areas(); err != nil {
		return err
	}
	for i := range used {
		nh.Slots[i].Offset = uint32(areas[fmt.Sprint(i)].off / 512)
	}
	// Free keyslots need places too: LUKS1 checks that no two keyslots'
	// material overlaps, active or not. cryptsetup converts a LUKS1 header
	// back to LUKS2 only if some keyslot starts at 4096, its place since
	// cryptsetup 1.1: a free one goes there.
	if err := placeFreeSlots(nh, used, areas, perSlot, h.areaEnd()); err != nil {
		return err
	}
	nh.spec = seg.Spec
	raw := nh.marshal()
	if _, err := parseLUKS1(raw, dev.Size()); err != nil {
		return cannot("luks1", "the LUKS1 header would not be valid: %v", err)
	}
	sector2 := make([]byte, 512)
	copy(sector2, raw[512:])
	if err := writeAt(dev, sector2, 512, false); err != nil {
		return err
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	if err := writeAt(dev, raw[:512], 0, false); err != nil {
		return err
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	// The rest of both LUKS2 copies: zeros, as cryptsetup leaves the space
	// before the first keyslot.
	if err := zeroRange(dev, 1024, 2*int64(h.size())-1024); err != nil {
		return err
	}
	return dev.Sync()
}

// clearLowPlace moves, within LUKS2, a keyslot area that overlaps the
// LUKS1 place [4096, 4096+stride) elsewhere, so a free LUKS1 keyslot can
// sit there (see placeFreeSlots). The material is written to its new area
// before the header points there, and the old area wiped after.
func clearLowPlace(dev volume.Device, h *luks2Header, stride int64, rnd io.Reader) error {
	low := int64(luks1AlignKeyslots) + stride
	for _, id := range sortedIDs(h.meta.doc.Keyslots) {
		areas, err := h.meta.areas()
		if err != nil {
			return err
		}
		a := areas[id]
		if int64(a.off) >= low {
			continue
		}
		// The new area overlaps neither the old one nor [0, low).
		off, err := findAreaAbove(h.meta, h.size(), a.len, uint64(low))
		if err != nil {
			return cannot("luks1", "keyslot %s lies where LUKS1's first keyslot goes and the keyslots area has no room to move it: %v", id, err)
		}
		material, err := readAt(dev, int64(a.off), int64(a.len))
		if err != nil {
			return err
		}
		err = writeAt(dev, material, int64(off), false)
		clear(material)
		if err != nil {
			return err
		}
		if err := dev.Sync(); err != nil {
			return err
		}
		meta, err := editLUKS2(h, func(raw map[string]any) {
			ks := object(raw, "keyslots")[id].(map[string]any)
			object(ks, "area")["offset"] = fmt.Sprint(off)
		})
		if err != nil {
			return err
		}
		if err := commitLUKS2(dev, h, meta, rnd, false); err != nil {
			return err
		}
		if err := wipe(dev, int64(a.off), int64(a.len), rnd); err != nil {
			return err
		}
	}
	return nil
}

// findAreaAbove is findArea for places at or above min.
func findAreaAbove(meta *metadata, hdrSize, n uint64, min uint64) (uint64, error) {
	areas, err := meta.areas()
	if err != nil {
		return 0, err
	}
	used := []interval{{0, min}}
	for _, a := range areas {
		used = append(used, a)
	}
	sort.Slice(used, func(i, j int) bool { return used[i].off < used[j].off })
	end := meta.keyslotsEnd(hdrSize)
	off := 2 * hdrSize
	for _, a := range used {
		if off+n <= a.off {
			break
		}
		if a.off+a.len > off {
			off = (a.off + a.len + 4095) &^ 4095
		}
	}
	if off+n > end {
		return 0, fmt.Errorf("no room for a %d-byte area", n)
	}
	return off, nil
}

// sameSpec reports whether the cipher text names spec.
func sameSpec(text string, spec CipherSpec) bool {
	s, err := ParseCipherSpec(text)
	return err == nil && s == spec
}

// placeFreeSlots gives the inactive LUKS1 keyslots places from 4096 on
// (the LUKS2 header under the first ones is gone once the volume is LUKS1)
// that overlap no keyslot in use, the lowest first.
func placeFreeSlots(h *luks1Header, used map[int]bool, areas map[string]interval, perSlot, end int64) error {
	type span struct{ off, end int64 }
	var taken []span
	for id, a := range areas {
		if used[atoiID(id)] {
			taken = append(taken, span{int64(a.off), int64(a.off + a.len)})
		}
	}
	stride := (perSlot + 4095) &^ 4095
	for i := range h.Slots {
		if used[i] {
			continue
		}
		sort.Slice(taken, func(a, b int) bool { return taken[a].off < taken[b].off })
		off := int64(luks1AlignKeyslots)
		for _, t := range taken {
			if off+perSlot <= t.off {
				break
			}
			if t.end > off {
				off = (t.end + 4095) &^ 4095
			}
		}
		if off+perSlot > end {
			return cannot("luks1", "there is no room in the keyslots area for LUKS1's %d free keyslot places", luks1NumKeys-len(used))
		}
		h.Slots[i] = luks1Slot{Active: luks1SlotDisabled, Offset: uint32(off / 512), Stripes: luks1Stripes}
		taken = append(taken, span{off, off + stride})
	}
	return nil
}

// zeroRange writes n zero bytes at off.
func zeroRange(dev volume.Device, off, n int64) error {
	buf := make([]byte, min(n, 1<<20))
	for done := int64(0); done < n; {
		k := min(int64(len(buf)), n-done)
		if err := writeAt(dev, buf[:k], off+done, false); err != nil {
			return err
		}
		done += k
	}
	return nil
}
