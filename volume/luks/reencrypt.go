package luks

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// Re-encryption of LUKS volumes in place, recorded in LUKS2's own format
// for it (what cryptsetup's reencrypt writes), so that cryptsetup shows a
// re-encryption cryptvol left half done (luksDump), can resume it, and
// cryptvol can resume cryptsetup's:
//
//   - the mandatory requirement "online-reencrypt-v2": a LUKS2 reader
//     that does not know re-encryption refuses the volume;
//   - a keyslot of type "reencrypt" (mode, direction) whose area holds the
//     hot zone's protection: the checksums of its blocks (area type
//     "checksum", with the hash and block size) or a copy of it
//     ("journal");
//   - the data segments as they stand: the part done (new cipher), the
//     chunk being rewritten (flag "in-reencryption", both keys), the part
//     to do (old cipher); and copies of the old and new segments flagged
//     "backup-previous" and "backup-final";
//   - a second keyslot for the passphrase, holding the new volume key
//     under its own digest; the old keyslots stay until the end;
//   - a digest bound to the reencrypt keyslot over the old and new volume
//     keys and the metadata above ("verification data"), which a resume
//     checks, so that nobody can change the re-encryption's parameters
//     without the keys.
//
// Each chunk: its protection is written to the reencrypt keyslot's area
// and synced, then the header with the chunk marked "in-reencryption" is
// committed (both copies, synced), the chunk rewritten and synced. With
// checksums, the next chunk's commit records the previous one as done;
// with a journal, a commit of the segments does so first (the journal is
// about to be overwritten). After a crash, the segment marked
// "in-reencryption" is the hot chunk.
//
// A LUKS1 volume is converted to LUKS2 first (Convert, crash-safe) with a
// token that says to convert it back, as cryptsetup does: LUKS1 has no
// way to record a re-encryption.

// ErrNotReencrypting is returned when resuming a volume with no
// re-encryption in progress.
var ErrNotReencrypting = errors.New("no re-encryption of this volume is in progress")

const (
	reencryptRequirement = "online-reencrypt-v2"
	reencryptVersion     = 2
	convertBackToken     = "cryptvol-convert-back"
	maxHotzone           = 1 << 30 // cryptsetup's LUKS2_REENCRYPT_MAX_HOTZONE_LENGTH
)

// ReencryptOptions describe a LUKS re-encryption.
type ReencryptOptions struct {
	// Cipher is the new data cipher ("" keeps it), KeySize the new key's
	// bits (0: the current size, or the cipher's default when it
	// changes), SectorSize the new encryption sector size (0 keeps it).
	Cipher     string
	KeySize    int
	SectorSize int
	// Resilience is checksum (default) or journal.
	Resilience volume.Resilience
	// Rand is the randomness source; nil means crypto/rand.
	Rand io.Reader
	// Warn hears about keyslots that cannot be carried over.
	Warn func(string)
}

// Reencryption is a LUKS2 re-encryption in progress (volume.Reencryption).
type Reencryption struct {
	dev, hdr  volume.Device
	h         *luks2Header
	rnd       io.Reader
	oldKey    []byte
	newKey    []byte
	dataOff   int64
	tweak     uint64 // iv_tweak of the data area's first sector (512-byte units)
	fixedSize bool
	oldSeg    jsonSegment // backup-previous
	newSeg    jsonSegment // backup-final
	digestOld string
	digestNew string
	reencID   string
	area      interval
	plan      volume.ReencryptPlan
	backTo1   bool // convert back to LUKS1 when done
	encrypt   bool // mode "encrypt": the old data is plain (a linear segment)
	// hotEnd, when the last commit put a chunk in re-encryption, is
	// where that chunk ends (0 otherwise).
	hotEnd int64
	// started says this process started the re-encryption, so that
	// protUsed, the most protection it wrote, is all the reencrypt
	// keyslot's area ever held.
	started  bool
	protUsed int64
}

// Plan implements volume.Reencryption.
func (r *Reencryption) Plan() *volume.ReencryptPlan { p := r.plan; return &p }

// Device implements volume.Reencryption.
func (r *Reencryption) Device() volume.Device { return r.dev }

// Close wipes the keys.
func (r *Reencryption) Close() error {
	clear(r.oldKey)
	clear(r.newKey)
	return nil
}

func (o *ReencryptOptions) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}

// StartReencrypt begins re-encrypting the LUKS volume whose header is on
// hdr and data on dev (the same device unless the header is detached)
// with a new volume key: the passphrase the credentials stand for gets a
// keyslot for it, and the re-encryption's metadata is committed in one
// header write. Keyslots of other passphrases cannot be carried over (the
// new key can only be sealed with a passphrase given); they are removed
// when the re-encryption completes, which Warn is told.
func StartReencrypt(ctx context.Context, dev, hdr volume.Device, creds volume.Credentials, o ReencryptOptions) (*Reencryption, error) {
	if o.Resilience == "" {
		o.Resilience = volume.ResilienceChecksum
	}
	if o.Resilience != volume.ResilienceChecksum && o.Resilience != volume.ResilienceJournal {
		return nil, volume.InvalidOptionf("unknown resilience %q (want checksum or journal)", o.Resilience)
	}
	rnd := orRand(o.Rand)
	l, err := load(hdr, "luks")
	if err != nil {
		return nil, err
	}
	backTo1 := false
	if l.v1 != nil {
		if o.SectorSize != 0 && o.SectorSize != 512 {
			return nil, volume.InvalidOption(errors.New("LUKS1 volumes have 512-byte sectors only (convert to LUKS2 first for larger ones)"))
		}
		// The passphrase is checked before the header is converted, so a
		// wrong one leaves the volume as it was.
		u, err := unlockHeader(ctx, hdr, creds)
		if err != nil {
			return nil, err
		}
		clear(u.key)
		// The LUKS2 header carries the convert-back token from its first
		// write: a kill before the re-encryption is recorded leaves a
		// LUKS2 volume that the next run still knows was LUKS1.
		if err := Convert(ctx, hdr, "luks2", ConvertOptions{Rand: rnd, convertBack: true}); err != nil {
			return nil, fmt.Errorf("converting LUKS1 to LUKS2 for the re-encryption: %w", err)
		}
		if l, err = load(hdr, "luks2"); err != nil {
			return nil, err
		}
	}
	h := l.v2
	backTo1 = hasConvertBack(h)
	if reencrypting(h) {
		return nil, fmt.Errorf("%w (resume it instead of starting another)", volume.ErrReencrypting)
	}
	u, err := unlockHeader(ctx, hdr, creds)
	if err != nil {
		return nil, err
	}
	oldKey := u.key
	fail := func(err error) (*Reencryption, error) {
		clear(oldKey)
		return nil, err
	}
	seg, err := h.dataSegment()
	if err != nil {
		return fail(err)
	}
	oldID := fmt.Sprint(u.slot)
	oldSlot := h.meta.doc.Keyslots[oldID]
	newSpec := seg.Spec
	if o.Cipher != "" {
		if newSpec, err = ParseCipherSpec(o.Cipher); err != nil {
			return fail(volume.InvalidOption(err))
		}
	}
	kb := len(oldKey)
	switch {
	case o.KeySize != 0:
		if o.KeySize%8 != 0 || o.KeySize <= 0 {
			return fail(volume.InvalidOptionf("key size %d bits is not a whole number of bytes", o.KeySize))
		}
		kb = o.KeySize / 8
	case o.Cipher != "" && newSpec.Chain != seg.Spec.Chain:
		kb = 32
		if newSpec.Chain == "xts" {
			kb = 64
		}
	}
	if err := newSpec.Check(kb); err != nil {
		return fail(volume.InvalidOption(err))
	}
	newSS := seg.SectorSize
	if o.SectorSize != 0 {
		newSS = o.SectorSize
	}
	if newSS != 512 && newSS != 1024 && newSS != 2048 && newSS != 4096 {
		return fail(volume.InvalidOptionf("sector size %d: want 512, 1024, 2048 or 4096", newSS))
	}
	if backTo1 && newSS != 512 {
		return fail(volume.InvalidOption(errors.New("LUKS1 volumes have 512-byte sectors only")))
	}
	align := int64(max(seg.SectorSize, newSS))
	js := h.meta.doc.Segments[seg.ID]
	fixed := js.Size != "dynamic"
	size := seg.Size
	if !fixed {
		size = dev.Size() - seg.Offset
		size -= size % align
	}
	if seg.Offset%int64(newSS) != 0 || size%int64(newSS) != 0 || size <= 0 {
		return fail(fmt.Errorf("the data area (%d bytes at %d) is not aligned to %d-byte sectors", size, seg.Offset, newSS))
	}
	if seg.IVTweak%uint64(newSS/512) != 0 {
		return fail(fmt.Errorf("%w: iv_tweak %d does not fit %d-byte sectors", volume.ErrUnsupported, seg.IVTweak, newSS))
	}
	// Keyslots of other passphrases cannot hold the new key.
	var others []string
	for _, id := range sortedIDs(h.meta.doc.Keyslots) {
		if dg, ok := h.meta.digestOf(id); ok && dg == u.digest && id != oldID {
			others = append(others, id)
		}
	}
	if len(others) > 0 {
		o.warn(fmt.Sprintf("keyslot(s) %s open the volume with other passphrases, which cannot be carried over to the new key: they are removed when the re-encryption completes (add them again afterwards)", strings.Join(others, ", ")))
	}
	if len(h.meta.doc.Tokens) > 0 {
		o.warn("tokens bound to the removed keyslots lose them")
	}

	newKey, err := randomBytes(rnd, kb)
	if err != nil {
		return fail(err)
	}
	r := &Reencryption{dev: dev, hdr: u.dev, h: h, rnd: rnd, oldKey: oldKey, newKey: newKey,
		dataOff: seg.Offset, tweak: seg.IVTweak, fixedSize: fixed, digestOld: u.digest, backTo1: backTo1}
	fail2 := func(err error) (*Reencryption, error) {
		r.Close()
		return nil, err
	}
	// The new keyslot: the same passphrase, KDF and costs as the one that
	// opened (a fresh salt), its area cipher if it takes the new key.
	kp, err := kdfParams(oldSlot.KDF)
	if err != nil {
		return fail2(err)
	}
	slotSpec, err := keyslotSpec(oldSlot.Area.Encryption, newSpec, kb, 2)
	if err != nil || backTo1 {
		// LUKS1 encrypts its keyslots with the data cipher: a volume
		// going back to LUKS1 needs it there too.
		slotSpec = newSpec
	}
	pass, err := Passphrase(creds)
	if err != nil {
		return fail2(err)
	}
	defer clear(pass)
	newID, err := freeLUKS2Slot(h, nil, "")
	if err != nil {
		return fail2(err)
	}
	areaOff, err := findArea(h.meta, h.size(), luks2AreaSize(kb, luks1Stripes), "")
	if err != nil {
		return fail2(err)
	}
	slot, material, err := newLUKS2Keyslot(ctx, newKey, pass, kp, slotSpec, oldSlot.AF.Hash, areaOff, rnd)
	if err != nil {
		return fail2(err)
	}
	defer clear(material)
	oldDigest := h.meta.doc.Digests[u.digest]
	newDigest, err := digestObject(newKey, oldDigest.Hash, oldDigest.Iterations, rnd)
	if err != nil {
		return fail2(err)
	}
	newSeg := segmentObject("crypt", seg.Offset, sizeOrDynamic(fixed, size), seg.IVTweak, newSpec.String(), newSS, "backup-final")
	oldSegCopy := deepCopy(h.meta.raw["segments"].(map[string]any)[seg.ID]).(map[string]any)
	oldSegCopy["flags"] = []any{"backup-previous"}

	// The reencrypt keyslot takes the largest free gap left.
	var reencArea interval
	meta, err := editLUKS2(h, func(raw map[string]any) {
		object(raw, "keyslots")[newID] = slot
	})
	if err != nil {
		return fail2(fmt.Errorf("internal error editing LUKS2 metadata: %w", err))
	}
	if reencArea, err = largestGap(meta, h.size()); err != nil {
		return fail2(err)
	}
	blockSize := int64(max(seg.SectorSize, newSS))
	reencID := ""
	for i := 0; i < 32; i++ {
		if id := fmt.Sprint(i); id != newID {
			if _, used := h.meta.doc.Keyslots[id]; !used {
				reencID = id
				break
			}
		}
	}
	if reencID == "" {
		return fail2(fmt.Errorf("%w: all 32 LUKS2 keyslots are in use", ErrKeyslotInUse))
	}
	area := map[string]any{"type": string(o.Resilience), "offset": fmt.Sprint(reencArea.off), "size": fmt.Sprint(reencArea.len)}
	if o.Resilience == volume.ResilienceChecksum {
		area["hash"], area["sector_size"] = "sha256", blockSize
	}
	reencSlot := map[string]any{"type": "reencrypt", "key_size": int64(1), "mode": "reencrypt", "direction": "forward",
		"priority": int64(0), "area": area}
	bpID := freeID(h.meta.doc.Segments, "")
	bfID := freeID(h.meta.doc.Segments, bpID)
	newDigestID := freeID(h.meta.doc.Digests, "")
	reencDigestID := freeID(h.meta.doc.Digests, newDigestID)
	meta, err = editLUKS2(h, func(raw map[string]any) {
		object(raw, "keyslots")[newID] = slot
		object(raw, "keyslots")[reencID] = reencSlot
		segs := object(raw, "segments")
		segs[bpID], segs[bfID] = oldSegCopy, newSeg
		dg := object(raw, "digests")
		od := dg[u.digest].(map[string]any)
		od["segments"] = toAny([]string{seg.ID, bpID})
		newDigest["keyslots"], newDigest["segments"] = []any{newID}, []any{bfID}
		dg[newDigestID] = newDigest
		dg[reencDigestID] = map[string]any{"type": "pbkdf2", "keyslots": []any{reencID}, "segments": []any{}, "hash": "sha256",
			"iterations": oldDigest.Iterations, "salt": "", "digest": ""}
		setRequirement(raw, true)
	})
	if err != nil {
		return fail2(fmt.Errorf("internal error editing LUKS2 metadata: %w", err))
	}
	// The verification digest covers the metadata just built.
	vd, err := verificationData(meta, oldKey, newKey, reencryptVersion)
	if err != nil {
		return fail2(err)
	}
	rd, err := digestObject(vd, "sha256", oldDigest.Iterations, rnd)
	clear(vd)
	if err != nil {
		return fail2(err)
	}
	meta, err = (&metadata{raw: meta.raw}).editDigest(h.size(), reencDigestID, rd)
	if err != nil {
		return fail2(err)
	}
	if err := writeAt(r.hdr, material, int64(areaOff), false); err != nil {
		return fail2(err)
	}
	if err := r.hdr.Sync(); err != nil {
		return fail2(err)
	}
	if err := commitLUKS2(r.hdr, h, meta, rnd, false); err != nil {
		return fail2(err)
	}
	if err := r.load(); err != nil {
		return fail2(err)
	}
	r.started = true
	return r, nil
}

// ResumeReencrypt picks up the re-encryption in progress on the LUKS2
// header on hdr (ours or cryptsetup's): the passphrase opens the old and
// the new volume key, which must verify the re-encryption's metadata.
func ResumeReencrypt(ctx context.Context, dev, hdr volume.Device, creds volume.Credentials) (*Reencryption, error) {
	l, err := load(hdr, "luks")
	if err != nil {
		return nil, err
	}
	if l.v1 != nil || !reencrypting(l.v2) {
		return nil, ErrNotReencrypting
	}
	h := l.v2
	g, err := watch(hdr, l)
	if err != nil {
		return nil, err
	}
	r := &Reencryption{dev: dev, hdr: g, h: h, rnd: orRand(nil)}
	if err := r.findBackups(); err != nil {
		return nil, err
	}
	pass, err := Passphrase(creds)
	if err != nil {
		return nil, err
	}
	defer clear(pass)
	for _, k := range []struct {
		digest string
		key    *[]byte
	}{{r.digestOld, &r.oldKey}, {r.digestNew, &r.newKey}} {
		if k.digest == "" {
			continue // encrypting: the old data is plain
		}
		atts, err := luks2Attempts(hdr, h, k.digest, pass, nil)
		if err != nil {
			r.Close()
			return nil, err
		}
		got, err := runAttempts(ctx, atts, nil)
		if err != nil {
			r.Close()
			return nil, err
		}
		*k.key = got.key
	}
	version := byte(reencryptVersion)
	if contains(h.meta.requirements(), "online-reencrypt-v3") {
		version = 3
	}
	vd, err := verificationData(h.meta, r.oldKey, r.newKey, version)
	if err != nil {
		r.Close()
		return nil, err
	}
	dg, _ := h.meta.digestOf(r.reencID)
	ok := false
	if dg != "" {
		ok, err = verifyLUKS2Digest(ctx, &h.meta.doc, dg, vd)
	}
	clear(vd)
	if err != nil || !ok {
		r.Close()
		if err == nil {
			err = fmt.Errorf("%w: the re-encryption metadata does not verify with the volume keys (it was changed, or is damaged)", volume.ErrDamaged)
		}
		return nil, err
	}
	if err := r.load(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// reencrypting reports whether h records a re-encryption.
func reencrypting(h *luks2Header) bool {
	for _, q := range h.meta.requirements() {
		if strings.HasPrefix(q, "online-reencrypt") {
			return true
		}
	}
	return false
}

// findBackups locates the re-encryption's keyslot, backup segments and
// their digests, and checks that cryptvol can carry it on.
func (r *Reencryption) findBackups() error {
	d := &r.h.meta.doc
	if contains(r.h.meta.requirements(), "online-reencrypt") {
		return fmt.Errorf("%w: the re-encryption metadata is of cryptsetup before 2.4.3 (online-reencrypt); let cryptsetup repair it first (cryptsetup repair)", volume.ErrUnsupported)
	}
	for _, id := range sortedIDs(d.Keyslots) {
		if d.Keyslots[id].Type == "reencrypt" {
			r.reencID = id
		}
	}
	if r.reencID == "" {
		return fmt.Errorf("%w: a re-encryption requirement but no reencrypt keyslot", volume.ErrDamaged)
	}
	ks := d.Keyslots[r.reencID]
	if (ks.Mode != "reencrypt" && ks.Mode != "encrypt") || ks.Direction != "forward" {
		return fmt.Errorf("%w: resuming a %s %s re-encryption is left to cryptsetup (cryptvol resumes forward re-encryptions and encryptions)", volume.ErrUnsupported, ks.Direction, ks.Mode)
	}
	r.encrypt = ks.Mode == "encrypt"
	for _, id := range sortedIDs(d.Segments) {
		s := d.Segments[id]
		switch {
		case contains(s.Flags, "backup-previous"):
			r.oldSeg = s
			r.digestOld, _ = r.h.meta.segmentDigest(id)
		case contains(s.Flags, "backup-final"):
			r.newSeg = s
			r.digestNew, _ = r.h.meta.segmentDigest(id)
		case contains(s.Flags, "backup-moved-segment"):
			return fmt.Errorf("%w: a re-encryption with a moved segment is left to cryptsetup", volume.ErrUnsupported)
		}
	}
	wantOld := "crypt"
	if r.encrypt {
		wantOld = "linear"
	}
	if r.oldSeg.Type != wantOld || r.newSeg.Type != "crypt" || (r.digestOld == "") != r.encrypt || r.digestNew == "" {
		return fmt.Errorf("%w: the re-encryption's backup segments are missing or of the wrong kind", volume.ErrDamaged)
	}
	off, _ := parseU64(r.newSeg.Offset)
	if o2, _ := parseU64(r.oldSeg.Offset); o2 != off {
		return fmt.Errorf("%w: a re-encryption that moves the data is left to cryptsetup", volume.ErrUnsupported)
	}
	return nil
}

// load reads the re-encryption's state from r.h (after StartReencrypt's
// commit, or for a resume).
func (r *Reencryption) load() error {
	if err := r.findBackups(); err != nil {
		return err
	}
	d := &r.h.meta.doc
	newSpec, err := ParseCipherSpec(r.newSeg.Encryption)
	if err != nil {
		return fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	newSS := int(r.newSeg.SectorSize)
	oldSS := newSS
	var oldMode sector.Mode
	if !r.encrypt {
		oldSpec, err := ParseCipherSpec(r.oldSeg.Encryption)
		if err != nil {
			return fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
		}
		oldSS = int(r.oldSeg.SectorSize)
		if oldMode, err = oldSpec.NewMode(r.oldKey, oldSS); err != nil {
			return fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
		}
	}
	newMode, err := newSpec.NewMode(r.newKey, newSS)
	if err != nil {
		return fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	off, _ := parseU64(r.newSeg.Offset)
	r.dataOff = int64(off)
	r.tweak, _ = parseU64(r.oldSeg.IVTweak)
	align := int64(max(oldSS, newSS))
	var size int64
	r.fixedSize = r.oldSeg.Size != "dynamic"
	if r.fixedSize {
		s, _ := parseU64(r.oldSeg.Size)
		size = int64(s)
	} else {
		size = r.dev.Size() - r.dataOff
		size -= size % align
	}
	if size <= 0 || r.dataOff+size > r.dev.Size() {
		return fmt.Errorf("%w: the data area (%d bytes at %d) does not fit the %d-byte device", volume.ErrDamaged, size, r.dataOff, r.dev.Size())
	}
	ks := d.Keyslots[r.reencID]
	areas, err := r.h.meta.areas()
	if err != nil {
		return err
	}
	r.area = areas[r.reencID]
	p := volume.ReencryptPlan{
		Format: "luks2", Size: size, Encrypt: r.encrypt,
		Old:        volume.ReencryptSide{Mode: oldMode, SectorSize: oldSS, Offset: r.dataOff, FirstSector: r.tweak / uint64(oldSS/512)},
		New:        volume.ReencryptSide{Mode: newMode, SectorSize: newSS, Offset: r.dataOff, FirstSector: r.tweak / uint64(newSS/512)},
		Resilience: volume.Resilience(ks.Area.Type),
		Align:      align,
	}
	switch p.Resilience {
	case volume.ResilienceChecksum:
		hs, err := lookupHash(ks.Area.Hash)
		if err != nil || ks.Area.SectorSize < 512 || ks.Area.SectorSize&(ks.Area.SectorSize-1) != 0 {
			return fmt.Errorf("%w: checksum resilience with hash %q over %d-byte blocks", volume.ErrUnsupported, ks.Area.Hash, ks.Area.SectorSize)
		}
		p.Hash, p.BlockSize, p.SumSize = ks.Area.Hash, int(ks.Area.SectorSize), hs.Size
		p.Align = max(p.Align, ks.Area.SectorSize)
		p.MaxChunk = int64(r.area.len) / int64(hs.Size) * ks.Area.SectorSize
	case volume.ResilienceJournal:
		p.MaxChunk = int64(r.area.len)
	case "none":
		p.MaxChunk = 20 << 20 // cryptsetup's LUKS2_DEFAULT_NONE_REENCRYPTION_LENGTH
	default:
		return fmt.Errorf("%w: re-encryption resilience %q", volume.ErrUnsupported, ks.Area.Type)
	}
	p.MaxChunk = min(p.MaxChunk, maxHotzone)
	// Where it got to: the segment being rewritten, or the end of the
	// first (new) segment.
	var live []string
	for _, id := range sortedIDs(d.Segments) {
		if !isBackup(d.Segments[id]) {
			live = append(live, id)
		}
	}
	for _, id := range live {
		s := d.Segments[id]
		if !contains(s.Flags, "in-reencryption") {
			continue
		}
		so, _ := parseU64(s.Offset)
		sl, _ := parseU64(s.Size)
		hot := &volume.ReencryptHot{Offset: int64(so) - r.dataOff, Length: int64(sl)}
		if hot.Offset < 0 || hot.Length <= 0 || hot.Offset+hot.Length > size {
			return fmt.Errorf("%w: the segment being re-encrypted (%d bytes at %d) lies outside the data area", volume.ErrDamaged, hot.Length, so)
		}
		switch p.Resilience {
		case volume.ResilienceChecksum:
			n := (hot.Length + int64(p.BlockSize) - 1) / int64(p.BlockSize) * int64(p.SumSize)
			if n > int64(r.area.len) {
				return fmt.Errorf("%w: the hot zone needs more checksums than the reencrypt keyslot holds", volume.ErrDamaged)
			}
			if hot.Protection, err = readAt(r.hdr, int64(r.area.off), n); err != nil {
				return err
			}
		case volume.ResilienceJournal:
			if hot.Length > int64(r.area.len) {
				return fmt.Errorf("%w: the hot zone is larger than the journal", volume.ErrDamaged)
			}
			if hot.Protection, err = readAt(r.hdr, int64(r.area.off), hot.Length); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: the re-encryption was interrupted inside a chunk without resilience data; its data may be damaged", volume.ErrDamaged)
		}
		p.Hot, p.Done = hot, hot.Offset
	}
	if p.Hot == nil {
		first := d.Segments[live[0]]
		dg, _ := r.h.meta.segmentDigest(live[0])
		switch {
		case len(live) == 2:
			n, _ := parseU64(first.Size)
			p.Done = int64(n)
		case len(live) == 1 && dg == r.digestNew && first.Type == "crypt" && first.Encryption == r.newSeg.Encryption:
			p.Done = size
		case len(live) == 1:
			p.Done = 0
		default:
			return fmt.Errorf("%w: %d data segments in a re-encryption", volume.ErrDamaged, len(live))
		}
	}
	r.backTo1 = hasConvertBack(r.h)
	r.plan = p
	return nil
}

func isBackup(s jsonSegment) bool {
	for _, f := range s.Flags {
		if strings.HasPrefix(f, "backup-") {
			return true
		}
	}
	return false
}

// CommitHot implements volume.Reencryption: the protection into the
// reencrypt keyslot's area, then the segments with [off, off+n) in
// re-encryption.
func (r *Reencryption) CommitHot(ctx context.Context, off, n int64, prot []byte) error {
	if int64(len(prot)) > int64(r.area.len) {
		return fmt.Errorf("internal error: %d bytes of protection for a %d-byte area", len(prot), r.area.len)
	}
	if len(prot) > 0 {
		r.protUsed = max(r.protUsed, int64(len(prot)))
		if err := writeAt(r.hdr, prot, int64(r.area.off), false); err != nil {
			return err
		}
		if err := r.hdr.Sync(); err != nil {
			return err
		}
	}
	if err := r.commitSegments(off, n); err != nil {
		return err
	}
	r.plan.Done, r.hotEnd = off, off+n
	return nil
}

// CommitDone implements volume.Reencryption.
func (r *Reencryption) CommitDone(ctx context.Context, done int64) error {
	if err := r.commitSegments(done, 0); err != nil {
		return err
	}
	r.plan.Done, r.plan.Hot, r.hotEnd = done, nil, 0
	return nil
}

// commitSegments commits the segments for done bytes re-encrypted and,
// if hot > 0, the next hot bytes in re-encryption (cryptsetup's "hot" and
// "post" segments, forward direction).
func (r *Reencryption) commitSegments(done, hot int64) error {
	size := r.plan.Size
	newSS, oldSS := int(r.newSeg.SectorSize), int(r.oldSeg.SectorSize)
	rest := func(from int64) any {
		if r.fixedSize {
			return fmt.Sprint(size - from)
		}
		return "dynamic"
	}
	type seg struct {
		obj    map[string]any
		digest []string
	}
	var segs []seg
	if done > 0 {
		var sz any = fmt.Sprint(done)
		if done == size && hot == 0 {
			sz = rest(0)
		}
		segs = append(segs, seg{segmentObject("crypt", r.dataOff, sz, r.tweak, r.newSeg.Encryption, newSS, ""), []string{r.digestNew}})
	}
	if hot > 0 {
		both := []string{r.digestNew, r.digestOld}
		if r.encrypt {
			both = both[:1]
		}
		segs = append(segs, seg{segmentObject("crypt", r.dataOff+done, fmt.Sprint(hot), r.tweak+uint64(done/512), r.newSeg.Encryption, newSS, "in-reencryption"), both})
	}
	if end := done + hot; end < size {
		var sz any = rest(end)
		if r.encrypt {
			segs = append(segs, seg{segmentObject("linear", r.dataOff+end, sz, 0, "", 0, ""), nil})
		} else {
			segs = append(segs, seg{segmentObject("crypt", r.dataOff+end, sz, r.tweak+uint64(end/512), r.oldSeg.Encryption, oldSS, ""), []string{r.digestOld}})
		}
	}
	meta, err := editLUKS2(r.h, func(raw map[string]any) {
		old := object(raw, "segments")
		var bp, bf any
		for _, v := range old {
			m, _ := v.(map[string]any)
			fl := stringList(m["flags"])
			switch {
			case contains(fl, "backup-previous"):
				bp = v
			case contains(fl, "backup-final"):
				bf = v
			}
		}
		ns := map[string]any{}
		assign := map[string][]string{}
		for i, s := range segs {
			id := fmt.Sprint(i)
			ns[id] = s.obj
			for _, d := range s.digest {
				assign[d] = append(assign[d], id)
			}
		}
		bpID, bfID := fmt.Sprint(len(segs)), fmt.Sprint(len(segs)+1)
		ns[bpID], ns[bfID] = bp, bf
		if r.digestOld != "" {
			assign[r.digestOld] = append(assign[r.digestOld], bpID)
		}
		assign[r.digestNew] = append(assign[r.digestNew], bfID)
		raw["segments"] = ns
		for id, v := range object(raw, "digests") {
			if m, ok := v.(map[string]any); ok {
				list := assign[id]
				sort.Slice(list, func(a, b int) bool { return atoiID(list[a]) < atoiID(list[b]) })
				m["segments"] = toAny(list)
			}
		}
	})
	if err != nil {
		return fmt.Errorf("internal error editing LUKS2 metadata: %w", err)
	}
	return commitLUKS2(r.hdr, r.h, meta, r.rnd, false)
}

// Finish implements volume.Reencryption: one commit leaves the new
// segment, the new keyslot(s) and digest; the old keyslots' and the
// reencrypt keyslot's areas are wiped after it. A volume that was LUKS1
// is converted back. The segments committed last may still have the last
// chunk in re-encryption (the engine wrote and synced it and commits it
// no further): until this commit lands, a resume finds that chunk all
// new.
func (r *Reencryption) Finish(ctx context.Context) error {
	if r.plan.Done != r.plan.Size && r.hotEnd != r.plan.Size {
		return fmt.Errorf("internal error: finishing a re-encryption at %d of %d bytes", r.plan.Done, r.plan.Size)
	}
	areas, err := r.h.meta.areas()
	if err != nil {
		return err
	}
	var gone []interval
	d := &r.h.meta.doc
	var oldSlots []string
	for _, id := range sortedIDs(d.Keyslots) {
		if dg, _ := r.h.meta.digestOf(id); (r.digestOld != "" && dg == r.digestOld) || id == r.reencID {
			oldSlots = append(oldSlots, id)
			a := areas[id]
			if id == r.reencID && r.started {
				// Only what this run wrote there: the area is most of
				// the keyslots area (some 16 MiB), the checksums of a
				// chunk a few hundred KiB. A resumed run does not know
				// what the runs before it wrote, and wipes it all.
				a.len = min(a.len, uint64(r.protUsed+4095)&^4095)
			}
			gone = append(gone, a)
		}
	}
	reencDigest, _ := r.h.meta.digestOf(r.reencID)
	meta, err := editLUKS2(r.h, func(raw map[string]any) {
		raw["segments"] = map[string]any{"0": segmentObject("crypt", r.dataOff, func() any {
			if r.fixedSize {
				return fmt.Sprint(r.plan.Size)
			}
			return "dynamic"
		}(), r.tweak, r.newSeg.Encryption, int(r.newSeg.SectorSize), "")}
		for _, id := range oldSlots {
			unassignKeyslot(raw, id)
		}
		dg := object(raw, "digests")
		if r.digestOld != "" {
			delete(dg, r.digestOld)
		}
		delete(dg, reencDigest)
		if m, ok := dg[r.digestNew].(map[string]any); ok {
			m["segments"] = []any{"0"}
		}
		// The convert-back token stays until the conversion back is
		// done (which drops it): a kill before then leaves a LUKS2
		// volume that the next run converts back.
		setRequirement(raw, false)
	})
	if err != nil {
		return fmt.Errorf("internal error editing LUKS2 metadata: %w", err)
	}
	if err := commitLUKS2(r.hdr, r.h, meta, r.rnd, false); err != nil {
		return err
	}
	filler, err := wipeFiller(r.rnd)
	if err != nil {
		return err
	}
	for _, a := range gone {
		if err := wipe(r.hdr, int64(a.off), int64(a.len), filler); err != nil {
			return err
		}
	}
	if err := r.hdr.Sync(); err != nil {
		return err
	}
	// Done: the plan says so, whether or not the last chunk was
	// committed before Finish.
	r.plan.Done, r.plan.Hot, r.hotEnd = r.plan.Size, nil, 0
	if r.backTo1 {
		if err := Convert(ctx, r.hdr, "luks1", ConvertOptions{Rand: r.rnd, convertBack: true}); err != nil {
			return fmt.Errorf("the re-encryption is complete, but converting the volume back to LUKS1 failed (it stays LUKS2): %w", err)
		}
	}
	return nil
}

// wipeFiller is the random stream Finish wipes the old keyslots and the
// reencrypt keyslot's area with (most of the keyslots area, some 16 MiB):
// ChaCha8, a cryptographically strong generator, keyed from rnd, which
// fills it some ten times faster than the system's random source.
func wipeFiller(rnd io.Reader) (io.Reader, error) {
	seed, err := randomBytes(rnd, 32)
	if err != nil {
		return nil, err
	}
	defer clear(seed)
	return mrand.NewChaCha8([32]byte(seed)), nil
}

// segmentObject builds a segment's JSON object; size is a decimal string
// or "dynamic".
func segmentObject(typ string, off int64, size any, tweak uint64, enc string, ss int, flag string) map[string]any {
	m := map[string]any{"type": typ, "offset": fmt.Sprint(off), "size": size}
	if typ == "crypt" {
		m["iv_tweak"], m["encryption"], m["sector_size"] = fmt.Sprint(tweak), enc, int64(ss)
	}
	if flag != "" {
		m["flags"] = []any{flag}
	}
	return m
}

func sizeOrDynamic(fixed bool, size int64) any {
	if fixed {
		return fmt.Sprint(size)
	}
	return "dynamic"
}

// digestObject builds a pbkdf2 digest of key (without its keyslots and
// segments).
func digestObject(key []byte, hash string, iterations int64, rnd io.Reader) (map[string]any, error) {
	hs, err := lookupHash(hash)
	if err != nil {
		return nil, err
	}
	salt, err := randomBytes(rnd, saltSize)
	if err != nil {
		return nil, err
	}
	iterations = max(iterations, minPBKDF2Iterations)
	dg := kdf.PBKDF2(hs, key, salt, int(iterations), hs.Size)
	b64 := base64.StdEncoding.EncodeToString
	return map[string]any{"type": "pbkdf2", "hash": hash, "iterations": iterations, "salt": b64(salt), "digest": b64(dg)}, nil
}

// editDigest replaces digest id's salt, hash, iterations and value.
func (m *metadata) editDigest(hdrSize uint64, id string, d map[string]any) (*metadata, error) {
	raw := deepCopy(m.raw).(map[string]any)
	dg := object(raw, "digests")[id].(map[string]any)
	for _, k := range []string{"hash", "iterations", "salt", "digest"} {
		dg[k] = d[k]
	}
	return (&metadata{raw: raw}).reparse(hdrSize)
}

// setRequirement adds or removes the re-encryption requirement.
func setRequirement(raw map[string]any, on bool) {
	cfg := object(raw, "config")
	req, _ := cfg["requirements"].(map[string]any)
	var list []string
	if req != nil {
		for _, q := range stringList(req["mandatory"]) {
			if !strings.HasPrefix(q, "online-reencrypt") {
				list = append(list, q)
			}
		}
	}
	if on {
		list = append(list, reencryptRequirement)
	}
	if len(list) == 0 {
		delete(cfg, "requirements")
		return
	}
	if req == nil {
		req = map[string]any{}
		cfg["requirements"] = req
	}
	req["mandatory"] = toAny(list)
}

// freeID is the lowest id not in m nor equal to also.
func freeID[T any](m map[string]T, also string) string {
	for i := 0; ; i++ {
		id := fmt.Sprint(i)
		if _, used := m[id]; !used && id != also {
			return id
		}
	}
}

// largestGap is the largest 4096-aligned free stretch of the keyslots area
// (cryptsetup's LUKS2_find_area_max_gap), for the reencrypt keyslot.
func largestGap(meta *metadata, hdrSize uint64) (interval, error) {
	areas, err := meta.areas()
	if err != nil {
		return interval{}, err
	}
	var used []interval
	for _, a := range areas {
		used = append(used, a)
	}
	sort.Slice(used, func(i, j int) bool { return used[i].off < used[j].off })
	end := meta.keyslotsEnd(hdrSize)
	best := interval{}
	off := 2 * hdrSize
	for _, a := range append(used, interval{end, 0}) {
		if a.off > off && a.off-off > best.len {
			best = interval{off, (a.off - off) &^ 4095}
		}
		if e := (a.off + a.len + 4095) &^ 4095; e > off {
			off = e
		}
	}
	if best.len < 4096 {
		return interval{}, fmt.Errorf("%w: the keyslots area has no room left for the re-encryption's keyslot", volume.ErrUnsupported)
	}
	return best, nil
}

// verificationData serializes, as cryptsetup does, what the re-encryption
// digest covers: a version mark, the old and new volume keys, the
// reencrypt keyslot's mode, direction and area, and the backup segments.
func verificationData(m *metadata, oldKey, newKey []byte, version byte) ([]byte, error) {
	d := &m.doc
	b := []byte{0x76, 0x30 + version}
	b = append(b, oldKey...)
	if string(oldKey) != string(newKey) {
		b = append(b, newKey...)
	}
	var ks *jsonKeyslot
	for _, id := range sortedIDs(d.Keyslots) {
		if k := d.Keyslots[id]; k.Type == "reencrypt" {
			ks = &k
			break
		}
	}
	if ks == nil || ks.Area == nil {
		return nil, fmt.Errorf("%w: no reencrypt keyslot", volume.ErrDamaged)
	}
	a := ks.Area
	u64 := func(s string) error {
		v, ok := parseU64(s)
		if !ok {
			return fmt.Errorf("%w: bad number %q in the re-encryption metadata", volume.ErrDamaged, s)
		}
		b = binary.BigEndian.AppendUint64(b, v)
		return nil
	}
	b = append(b, ks.Mode...)
	b = append(b, ks.Direction...)
	b = append(b, a.Type...)
	if err := errors.Join(u64(a.Offset), u64(a.Size)); err != nil {
		return nil, err
	}
	switch a.Type {
	case "checksum", "datashift-checksum":
		b = append(b, a.Hash...)
		b = binary.BigEndian.AppendUint32(b, uint32(a.SectorSize))
	}
	if strings.HasPrefix(a.Type, "datashift") {
		if err := u64(a.ShiftSize); err != nil {
			return nil, err
		}
	}
	for _, flag := range []string{"backup-previous", "backup-final", "backup-moved-segment"} {
		found := false
		for _, id := range sortedIDs(d.Segments) {
			s := d.Segments[id]
			if !contains(s.Flags, flag) {
				continue
			}
			found = true
			b = append(b, s.Type...)
			if err := u64(s.Offset); err != nil {
				return nil, err
			}
			if s.Size == "dynamic" {
				b = append(b, "dynamic"...)
			} else if err := u64(s.Size); err != nil {
				return nil, err
			}
			if s.Type == "crypt" {
				if err := u64(s.IVTweak); err != nil {
					return nil, err
				}
				b = append(b, s.Encryption...)
				b = binary.BigEndian.AppendUint32(b, uint32(s.SectorSize))
			}
			break
		}
		if !found && flag != "backup-moved-segment" {
			return nil, fmt.Errorf("%w: no %s segment", volume.ErrDamaged, flag)
		}
	}
	return b, nil
}

// hasConvertBack reports whether h carries the token saying the volume
// is LUKS1, converted to LUKS2 for a re-encryption.
func hasConvertBack(h *luks2Header) bool {
	for _, t := range h.meta.doc.Tokens {
		if t.Type == convertBackToken {
			return true
		}
	}
	return false
}
