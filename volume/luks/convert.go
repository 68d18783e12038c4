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
	// convertBack (the re-encryption's own conversions) puts the
	// convert-back token in the LUKS2 header written: the volume is
	// LUKS1 again once the re-encryption is done.
	convertBack bool
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
		return luks1ToLUKS2(g, l.v1, rnd, o.convertBack)
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

func luks1ToLUKS2(dev volume.Device, h *luks1Header, rnd io.Reader, convertBack bool) error {
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
		// A detached header file grows by the shift if it must (a
		// header file as big as its keyslots, which cryptsetup would
		// refuse): zeros after everything LUKS1 uses.
		if need := end + convertShift; dev.Size() < need {
			dev = &growingDevice{Device: dev, size: dev.Size()}
			if err := zeroRange(dev, dev.Size(), need-dev.Size(), true); err != nil {
				return err
			}
			if err := dev.Sync(); err != nil {
				return err
			}
		}
		limit = dev.Size()
	}
	ksSize := min(limit-2*hdrSize, maxKeyslotsSize) &^ 4095
	if ksSize <= 0 {
		return cannot("luks2", "the data starts at %d, leaving no room for the two %d-byte LUKS2 header copies", limit, hdrSize)
	}
	ksEnd := 2*hdrSize + ksSize
	n := afSectors(int(h.KeyBytes), luks1Stripes) * 512
	lay := &luks1Layout{n: n, low: luks1AlignKeyslots, limit: limit}
	var pos [luks1NumKeys]int64
	for i := range h.Slots {
		pos[i], _ = h.slotMaterial(i)
		lay.active[i] = h.Slots[i].Active == luks1SlotEnabled
	}
	// An interrupted conversion (this one or the one back) left the
	// keyslots part-way: they go to the LUKS2 places of the layout they
	// started from, not 28 KiB on from where they are.
	stride := int64(luks2AreaSize(int(h.KeyBytes), luks1Stripes))
	target, resumed := lay.resumeTargets(pos, stride, ksEnd)
	area := stride
	if !resumed {
		if first := h.firstSlotOffset(); first < luks1AlignKeyslots {
			return cannot("luks2", "the first keyslot starts at %d, before %d (cryptsetup converts only that layout)", first, luks1AlignKeyslots)
		}
		if end+convertShift > limit {
			return cannot("luks2", "the keyslots end at %d: moving them %d bytes on for the LUKS2 headers needs room up to %d, and the data starts at %d", end, convertShift, end+convertShift, limit)
		}
		// The area size cryptsetup gives every keyslot: LUKS1's
		// distance between keyslots 0 and 1.
		area = int64(h.Slots[1].Offset) - int64(h.Slots[0].Offset)
		if area *= 512; area < n || area%4096 != 0 {
			area = stride
		}
		target = map[int]int64{}
		for i := range h.Slots {
			if lay.active[i] {
				target[i] = pos[i] + convertShift
			}
		}
	}
	for i, t := range target {
		if t+area > ksEnd {
			return cannot("luks2", "keyslot %d would end at %d, past the LUKS2 keyslots area's end at %d", i, t+area, ksEnd)
		}
	}
	meta, err := luks2MetaFromLUKS1(h, target, hdrSize, ksSize, area, convertBack)
	if err != nil {
		return err
	}
	steps, err := lay.planMoves(pos, target)
	if err != nil {
		return cannot("luks2", "%v", err)
	}
	cur := *h
	left, err := moveKeyslots(dev, &cur, n, steps)
	if err != nil {
		return err
	}
	h2 := &luks2Header{bin: binHeader{Size: hdrSize, CsumAlg: "sha256", UUID: h.UUID}}
	if err := commitLUKS2Secondary1st(dev, h2, meta, rnd); err != nil {
		return err
	}
	// What the moves left in the keyslots area is stale key material
	// (the part under the headers is gone already). After an
	// interrupted run, copies it made may be anywhere: all of the area
	// but the keyslots in use is wiped.
	if resumed {
		for off := int64(2 * hdrSize); off < ksEnd; off += n {
			left = append(left, min(off, ksEnd-n))
		}
	}
	var inUse []int64
	for _, t := range target {
		inUse = append(inUse, t)
	}
	if err := wipeLeft(dev, left, n, inUse, 2*hdrSize, rnd); err != nil {
		return err
	}
	return dev.Sync()
}

// luks2MetaFromLUKS1 builds the LUKS2 metadata cryptsetup's conversion
// writes for h, every active keyslot i's area at at[i].
func luks2MetaFromLUKS1(h *luks1Header, at map[int]int64, hdrSize, ksSize, area int64, convertBack bool) (*metadata, error) {
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
		off := at[i]
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
	tokens := map[string]any{}
	if convertBack {
		tokens["0"] = map[string]any{"type": convertBackToken, "keyslots": []any{}}
	}
	raw := map[string]any{
		"keyslots": keyslots,
		"tokens":   tokens,
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
	// The convert-back token (a LUKS1 volume mid-way through a
	// re-encryption, or killed before it was converted back) is what this
	// conversion carries out.
	if n := len(d.Tokens) - convertBackTokens(d); n > 0 {
		return cannot("luks1", "the LUKS2 header holds %d token(s), which LUKS1 has no place for", n)
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
	// The LUKS1 places cryptsetup gives the keyslots: those in use move
	// convertShift bytes down (it moves the whole keyslots area), the
	// free ones go where it finds room for them.
	n := int64(perSlot)
	lay := &luks1Layout{n: n, low: luks1AlignKeyslots, limit: h.areaEnd()}
	var pos [luks1NumKeys]int64
	target := map[int]int64{}
	for i := range used {
		lay.active[i] = true
		pos[i] = int64(areas[fmt.Sprint(i)].off)
		target[i] = pos[i] - convertShift
	}
	final, err := cryptsetupFreePlaces(h, areas, used, keyBytes)
	if err != nil {
		return err
	}
	for i, t := range target {
		final[i] = t
	}
	if !lay.valid(final) {
		return cannot("luks1", "the LUKS1 keyslots would overlap (LUKS2 keyslot areas at %v)", areas)
	}
	// Until the keyslots have moved, the LUKS1 header points at their
	// LUKS2 places, the free keyslots wherever there is room.
	start, ok := lay.placeFree(pos, nil)
	if !ok {
		return cannot("luks1", "there is no room in the keyslots area for LUKS1's %d free keyslot places", luks1NumKeys-len(used))
	}
	steps, err := lay.planMoves(start, target)
	if err != nil {
		return cannot("luks1", "%v", err)
	}
	nh.spec = seg.Spec
	for i, p := range start {
		nh.Slots[i].Offset = uint32(p / 512)
		if !used[i] {
			nh.Slots[i] = luks1Slot{Active: luks1SlotDisabled, Offset: uint32(p / 512), Stripes: luks1Stripes}
		}
	}
	last := *nh
	for i, p := range final {
		last.Slots[i].Offset = uint32(p / 512)
	}
	for _, c := range []*luks1Header{nh, &last} {
		if _, err := parseLUKS1(c.marshal(), dev.Size()); err != nil {
			return cannot("luks1", "the LUKS1 header would not be valid: %v", err)
		}
	}
	// Everything checked: from here on the header changes.
	raw := nh.marshal()
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
	// before the first keyslot. No keyslot in use is there yet.
	if err := zeroRange(dev, 1024, 2*int64(h.size())-1024, false); err != nil {
		return err
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	left, err := moveKeyslots(dev, nh, n, steps)
	if err != nil {
		return err
	}
	if err := rewriteLUKS1(dev, nh, &last); err != nil {
		return err
	}
	var inUse []int64
	for _, t := range target {
		inUse = append(inUse, t)
	}
	if err := wipeLeft(dev, left, n, inUse, luks1AlignKeyslots, rnd); err != nil {
		return err
	}
	return dev.Sync()
}

// cryptsetupFreePlaces gives the free LUKS1 keyslots (those not in used)
// the places cryptsetup's conversion gives them: in LUKS2 terms, the
// first gap from the end of the headers big enough for a keyslot of the
// volume key's size, each taken in turn, moved down by convertShift.
func cryptsetupFreePlaces(h *luks2Header, areas map[string]interval, used map[int]bool, keyBytes int) ([luks1NumKeys]int64, error) {
	var out [luks1NumKeys]int64
	taken := make([]interval, 0, len(areas)+luks1NumKeys)
	for _, a := range areas {
		taken = append(taken, a)
	}
	size := (uint64(keyBytes)*luks1Stripes + 4095) &^ 4095
	end := h.meta.keyslotsEnd(h.size())
	for i := range out {
		if used[i] {
			continue
		}
		sort.Slice(taken, func(a, b int) bool { return taken[a].off < taken[b].off })
		off := 2 * h.size()
		for _, a := range taken {
			if off < a.off && off+size <= a.off {
				break
			}
			off = a.off + a.len
		}
		if off+size > end {
			return out, cannot("luks1", "there is no room in the keyslots area for free keyslot %d (cryptsetup says: not enough space in header keyslot area)", i)
		}
		taken = append(taken, interval{off, size})
		out[i] = int64(off) - convertShift
	}
	return out, nil
}

// sameSpec reports whether the cipher text names spec.
func sameSpec(text string, spec CipherSpec) bool {
	s, err := ParseCipherSpec(text)
	return err == nil && s == spec
}

// zeroRange writes n zero bytes at off (past the device's end if grow).
func zeroRange(dev volume.Device, off, n int64, grow bool) error {
	buf := make([]byte, min(n, 1<<20))
	for done := int64(0); done < n; {
		k := min(int64(len(buf)), n-done)
		if err := writeAt(dev, buf[:k], off+done, grow); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// convertBackTokens counts d's convert-back tokens.
func convertBackTokens(d *jsonDoc) int {
	n := 0
	for _, t := range d.Tokens {
		if t.Type == convertBackToken {
			n++
		}
	}
	return n
}
