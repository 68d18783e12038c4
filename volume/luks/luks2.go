package luks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
)

// luks2Header is a loaded LUKS2 header: the binary fields of the copy in
// use, both copies' salts (kept when the header is rewritten) and the
// metadata.
type luks2Header struct {
	bin     binHeader
	salts   [2][hdrSaltLen]byte // primary, secondary
	saltOK  [2]bool             // the copy was valid, so its salt is real
	meta    *metadata
	warning string // one copy damaged or outdated
	// stale is the copy warning is about (1 the primary, 2 the
	// secondary; 0 none): the next commit writes it first.
	stale int
}

// errNoMagic marks a copy that is not a LUKS2 header at all.
var errNoMagic = errors.New("no LUKS2 header")

type headerCopy struct {
	bin  *binHeader
	meta *metadata
	err  error
}

// readCopy reads and verifies one header copy at off.
func readCopy(dev volume.Device, off int64, secondary bool) headerCopy {
	if off+binHeaderSize > dev.Size() {
		return headerCopy{err: errNoMagic}
	}
	raw, err := readAt(dev, off, binHeaderSize)
	if err != nil {
		return headerCopy{err: err}
	}
	want := magic1st
	if secondary {
		want = magic2nd
	}
	if string(raw[:6]) != string(want) {
		return headerCopy{err: errNoMagic}
	}
	bin, err := parseBin(raw, off, secondary)
	if err != nil {
		return headerCopy{err: err}
	}
	if off+int64(bin.Size) > dev.Size() {
		return headerCopy{err: fmt.Errorf("LUKS2 header at %d (%d bytes) runs past the end of the device", off, bin.Size)}
	}
	full, err := readAt(dev, off, int64(bin.Size))
	if err != nil {
		return headerCopy{err: err}
	}
	if !checksumOK(bin.CsumAlg, full) {
		return headerCopy{err: fmt.Errorf("LUKS2 header at %d has a bad %s checksum", off, bin.CsumAlg)}
	}
	meta, err := parseJSONArea(full[binHeaderSize:], bin.Size)
	if err != nil {
		return headerCopy{err: err}
	}
	return headerCopy{bin: bin, meta: meta}
}

// readLUKS2 loads the newest valid copy of the LUKS2 header, as cryptsetup
// does: both copies are checked; the one with the higher sequence id wins,
// the primary on a tie; a damaged or outdated copy is reported in warning.
func readLUKS2(dev volume.Device) (*luks2Header, error) {
	p := readCopy(dev, 0, false)
	var s headerCopy
	if p.err == nil {
		s = readCopy(dev, int64(p.bin.Size), true)
	} else {
		for _, off := range secondaryOffsets {
			if s = readCopy(dev, off, true); s.err == nil || !errors.Is(s.err, errNoMagic) {
				break
			}
		}
	}
	var use headerCopy
	h := &luks2Header{}
	switch {
	case p.err == nil && s.err == nil:
		use = p
		if s.bin.SeqID > p.bin.SeqID {
			use = s
		}
		if s.bin.SeqID != p.bin.SeqID {
			h.stale = 2
			if use == s {
				h.stale = 1
			}
			h.warning = fmt.Sprintf("the two LUKS2 header copies differ (sequence ids %d and %d): using the newer one; the other is rewritten at the next header change",
				p.bin.SeqID, s.bin.SeqID)
		}
	case p.err == nil:
		use = p
		h.stale = 2
		h.warning = fmt.Sprintf("the secondary LUKS2 header is damaged (%v): using the primary; it is rewritten at the next header change", s.err)
	case s.err == nil:
		use = s
		h.stale = 1
		h.warning = fmt.Sprintf("the primary LUKS2 header is damaged (%v): using the secondary copy; it is rewritten at the next header change", p.err)
	default:
		if errors.Is(p.err, errNoMagic) && errors.Is(s.err, errNoMagic) {
			return nil, fmt.Errorf("%w: no LUKS2 header found", volume.ErrWrongPassword)
		}
		if errors.Is(p.err, volume.ErrDamaged) || errors.Is(p.err, volume.ErrUnsupported) {
			return nil, p.err
		}
		return nil, fmt.Errorf("%w: %v", volume.ErrDamaged, p.err)
	}
	h.bin = *use.bin
	h.bin.Secondary = false
	h.bin.Offset = 0
	h.meta = use.meta
	if p.err == nil {
		h.salts[0], h.saltOK[0] = p.bin.Salt, true
	}
	if s.err == nil {
		h.salts[1], h.saltOK[1] = s.bin.Salt, true
	}
	return h, nil
}

// size is the size of one header copy.
func (h *luks2Header) size() uint64 { return h.bin.Size }

// areaEnd is the end of both header copies and the keyslots area.
func (h *luks2Header) areaEnd() int64 { return int64(h.meta.keyslotsEnd(h.size())) }

// segment is the data segment a volume is opened with.
type segment struct {
	ID         string
	Offset     int64
	Size       int64 // 0: to the end of the device ("dynamic")
	Spec       CipherSpec
	SpecText   string
	SectorSize int
	IVTweak    uint64
	Digest     string
}

// knownRequirements are the requirement flags cryptsetup 2.6 knows; all of
// them concern reencryption, which cryptvol does not implement.
var knownRequirements = map[string]string{
	"offline-reencrypt":   "an offline reencryption (cryptsetup-reencrypt) is in progress",
	"online-reencrypt":    "an online reencryption is in progress",
	"online-reencrypt-v2": "an online reencryption is in progress",
	"online-reencrypt-v3": "an online reencryption is in progress",
}

// requirementError explains why a header with requirement flags cannot be
// used, or returns nil when it has none. cryptsetup refuses to activate or
// change such a volume (only dump, header backup and passphrase tests work).
func (h *luks2Header) requirementError() error {
	reqs := h.meta.requirements()
	if len(reqs) == 0 {
		return nil
	}
	for _, r := range reqs {
		if r == "online-reencrypt-v2" || r == "online-reencrypt-v3" {
			// Half the data is under the old key: no single key shows it.
			return volume.ErrReencrypting
		}
	}
	var why []string
	for _, r := range reqs {
		if w, ok := knownRequirements[r]; ok {
			why = append(why, r+": "+w)
		} else {
			why = append(why, r+": unknown to this version")
		}
	}
	return fmt.Errorf("%w: the LUKS2 header has mandatory requirements cryptvol cannot meet (%s); cryptsetup refuses it too",
		volume.ErrUnsupported, strings.Join(why, "; "))
}

// dataSegment returns the single crypt segment of an ordinary volume.
func (h *luks2Header) dataSegment() (*segment, error) {
	ids := sortedIDs(h.meta.doc.Segments)
	if len(ids) != 1 {
		return nil, fmt.Errorf("%w: %d data segments (only single-segment volumes are supported)", volume.ErrUnsupported, len(ids))
	}
	id := ids[0]
	js := h.meta.doc.Segments[id]
	if js.Type != "crypt" {
		return nil, fmt.Errorf("%w: data segment of type %q", volume.ErrUnsupported, js.Type)
	}
	if len(js.Integrity) > 0 && string(js.Integrity) != "null" {
		return nil, fmt.Errorf("%w: authenticated encryption (dm-integrity) segments are not supported", volume.ErrUnsupported)
	}
	off, _ := parseU64(js.Offset)
	var size uint64
	if js.Size != "dynamic" {
		size, _ = parseU64(js.Size)
	}
	tweak, _ := parseU64(js.IVTweak)
	ss := js.SectorSize
	if ss != 512 && ss != 1024 && ss != 2048 && ss != 4096 {
		return nil, fmt.Errorf("%w: sector size %d (LUKS2 allows 512, 1024, 2048 or 4096)", volume.ErrUnsupported, ss)
	}
	if off > 1<<62 || size > 1<<62 {
		return nil, fmt.Errorf("%w: data segment offset or size out of range", volume.ErrDamaged)
	}
	dg, _ := h.meta.segmentDigest(id)
	seg := &segment{ID: id, Offset: int64(off), Size: int64(size), SpecText: js.Encryption,
		SectorSize: int(ss), IVTweak: tweak, Digest: dg}
	spec, err := ParseCipherSpec(js.Encryption)
	if err != nil {
		return nil, fmt.Errorf("%w: data segment: %v", volume.ErrUnsupported, err)
	}
	seg.Spec = spec
	return seg, nil
}

// volumeKeySize is the key size of the keyslots bound to the segment's
// digest (all of them hold the same volume key).
func (h *luks2Header) volumeKeySize(digest string) int {
	for _, id := range sortedIDs(h.meta.doc.Keyslots) {
		k := h.meta.doc.Keyslots[id]
		if d, ok := h.meta.digestOf(id); ok && d == digest {
			return int(*k.KeySize)
		}
	}
	return 0
}
