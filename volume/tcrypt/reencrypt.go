package tcrypt

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// Re-encryption of TrueCrypt and VeraCrypt volumes in place.
//
// Neither program has a way to record a re-encryption in progress, so
// cryptvol keeps its state where the formats leave room and no program
// looks: in the 64 KiB header areas, of which a header uses its first 512
// bytes and the rest is random filler (the normal header's area at the
// start of the container and its backup area at the end; for a hidden
// volume, the hidden header's two areas). Nothing outside the volume is
// needed, nothing can be separated from it, and the areas are filled with
// random bytes again when the re-encryption is done.
//
// In each area, during a re-encryption:
//
//	+0      the transition header: the volume's header under the NEW key and
//	        cipher, sealed with the same password, PRF and iterations (a
//	        fresh salt), its minimum program version 0xFFFF and flag
//	        flagReencrypt set. VeraCrypt and TrueCrypt, which decrypt it with
//	        the password, stop with "a newer version is required": neither
//	        ever shows a half re-encrypted volume. cryptvol's ordinary opens
//	        see the flag and refuse with volume.ErrReencrypting (the CLI then
//	        completes the re-encryption first).
//	+512    the old header, as it was on disk (its own salt: it opens with
//	        the same password), so the old key is found again after a crash.
//	+1024   a journal record (32256 bytes), alternately in the two areas,
//	        encrypted under a key derived from the new master key: a sequence
//	        number, how far the re-encryption got and, for the chunk being
//	        rewritten, a checksum of every 4 KiB block of its old ciphertext.
//
// Each chunk (at most 15.7 MiB) is read, its checksums committed in the
// next journal record and synced, then it is rewritten and synced. After a
// crash the record with the highest valid sequence number tells which
// chunk was hot; in it a block whose checksum still matches is old and is
// re-encrypted again, any other is new (the page cache and disks write 4
// KiB pages or 512-byte sectors whole, and the data area is 4 KiB
// aligned). A torn record leaves the other, older one: its chunk is then
// found already rewritten. The transition header is written before the
// first chunk, and the new header (flag cleared, the ordinary minimum
// version) over it after the last one; the primary copy first, each
// synced, so one of the two copies always opens.
//
// Encrypting a plain image (StartEncrypt) moves its data up by 128 KiB to
// make room for the header area, from the end backwards, 128 KiB at a
// time: a chunk is written where the one above it was read from, which is
// recorded as done before, so the old copy of the chunk being rewritten is
// never overwritten (LUKS2's "datashift"). Until the end the transition
// header and the journal live in the backup header area (free room at the
// end of the image); the primary header area is written last, over what
// was the start of the image.

const (
	flagReencrypt       = 1 << 30 // a re-encryption is in progress
	flagReencryptShift  = 1 << 29 // it encrypts a plain image, moving it up by a header group
	minVersionReencrypt = 0xFFFF  // refused by every TrueCrypt and VeraCrypt

	oldHeaderOffset = headerSize     // in a header area: the old header's copy
	journalOffset   = 2 * headerSize // in a header area: the journal record
	journalSize     = (headerGroupSize/2 - journalOffset) / 2 / 512 * 512
	journalHeader   = 96
	journalBlock    = 4096
	journalSum      = 8
	journalMaxSums  = (journalSize - journalHeader) / journalSum
	journalMagic    = "CVRJ"
)

// ErrNotReencrypting is returned when resuming a volume with no
// re-encryption in progress.
var ErrNotReencrypting = errors.New("no re-encryption of this volume is in progress")

// reencrypting reports whether a header is a transition header.
func (h *header) reencrypting() bool { return h.Flags&flagReencrypt != 0 }

// ReencryptOptions describe a re-encryption.
type ReencryptOptions struct {
	// Open selects the volume (Hidden for the hidden one) and carries the
	// hints for the key derivations.
	Open volume.Options
	// Encryption is the new cipher chain; "" keeps the current one (a new
	// key only).
	Encryption string
	// ProtectHidden, when re-encrypting an outer volume, are the hidden
	// volume's credentials: its part of the outer data area is left as it
	// is (re-encrypting it would destroy the hidden volume).
	ProtectHidden *volume.Credentials
	// Random, if set, is extra entropy mixed into the new key and salts.
	Random io.Reader
}

// areas are the two header areas a re-encryption keeps its state in.
type areas struct{ primary, backup int64 }

func normalAreas(size int64) areas { return areas{0, size - headerGroupSize} }
func hiddenAreas(size int64) areas { return areas{offHidden, size + offBackupHidden} }

// Reencryption is a re-encryption of a TrueCrypt/VeraCrypt volume in
// progress (volume.Reencryption).
type Reencryption struct {
	dev   volume.Device
	areas areas
	shift bool // encrypting a plain image (StartEncrypt)
	// trans is the transition header (new key and cipher); kdf and pass
	// seal the final header.
	trans     *header
	newScheme scheme
	kdf       kdfCandidate
	pass      []byte
	ent       *entropy
	oldKey    []byte
	jkey      sector.Mode // encrypts the journal records
	seq       uint64
	plan      volume.ReencryptPlan
	// hot says the last journal record is a hot one, whose chunk,
	// done, takes Plan.Done to hotEnd.
	hot    bool
	hotEnd int64
}

// Plan implements volume.Reencryption.
func (r *Reencryption) Plan() *volume.ReencryptPlan { p := r.plan; return &p }

// Device implements volume.Reencryption.
func (r *Reencryption) Device() volume.Device { return r.dev }

// Close wipes the keys.
func (r *Reencryption) Close() error {
	clear(r.pass)
	clear(r.oldKey)
	if r.trans != nil {
		clear(r.trans.Keys[:])
	}
	return nil
}

// StartReencrypt begins re-encrypting the data area of the volume (or, with
// o.Open.Hidden, the hidden volume) on dev with a new master key and, if
// o.Encryption names one, a new cipher chain: the transition header and
// the first journal record are written (see the package comment); the data
// is rewritten by package volume/reencrypt. The credentials stay as they
// are.
func StartReencrypt(ctx context.Context, dev volume.Device, creds volume.Credentials, o ReencryptOptions) (*Reencryption, error) {
	opts := o.Open
	if opts.System {
		return nil, fmt.Errorf("%w: re-encrypting system encryption is left to VeraCrypt's own tools", volume.ErrUnsupported)
	}
	size := dev.Size()
	before, err := volume.SnapshotHeader(dev, headerCopies(size)...)
	if err != nil {
		return nil, fmt.Errorf("reading the volume headers: %w", err)
	}
	f, err := unlockHeader(ctx, dev, creds, opts, headerLocations(size, opts))
	if err != nil {
		return nil, err
	}
	defer clear(f.hdr.Keys[:])
	if f.hdr.reencrypting() {
		return nil, fmt.Errorf("%w (resume it instead of starting another)", volume.ErrReencrypting)
	}
	if f.scheme.Mode != "xts" || f.hdr.Version < 4 {
		return nil, fmt.Errorf("%w: legacy TrueCrypt volumes (header version %d, %s) are read-only", volume.ErrUnsupported, f.hdr.Version, f.scheme.Mode)
	}
	vera := f.hdr.Magic == "VERA"
	chain := f.scheme.Chain
	if o.Encryption != "" {
		co := CreateOptions{TrueCrypt: !vera, Encryption: o.Encryption, Hash: "SHA-512"}
		if chain, _, err = resolveCreate(&co, 0); err != nil {
			return nil, err
		}
	}
	off, dsize, first := dataArea(f, size)
	if f.loc.System || off < headerGroupSize || off+dsize > size-headerGroupSize {
		return nil, fmt.Errorf("%w: the data area (%d bytes at %d) is not a standard one", volume.ErrUnsupported, dsize, off)
	}
	span := dsize
	if o.ProtectHidden != nil && !f.loc.Hidden {
		ho := opts
		ho.Hidden, ho.Hash, ho.Encryption = true, "", ""
		hf, err := unlockHeader(ctx, dev, *o.ProtectHidden, ho, headerLocations(size, ho))
		if err != nil {
			if errors.Is(err, volume.ErrWrongPassword) {
				return nil, fmt.Errorf("%w: the hidden volume to protect did not open with the credentials given for it", volume.ErrWrongPassword)
			}
			return nil, err
		}
		clear(hf.hdr.Keys[:])
		hoff, _, _ := dataArea(hf, size)
		if hoff < off || hoff > off+dsize {
			return nil, fmt.Errorf("%w: the hidden volume lies outside the outer volume", volume.ErrDamaged)
		}
		span = hoff - off
	}
	ent, err := newEntropy(o.Random)
	if err != nil {
		return nil, err
	}
	pass, err := passwordInput(creds.Password, creds.Keyfiles, vera)
	if err != nil {
		return nil, err
	}
	ar := normalAreas(size)
	if f.loc.Hidden {
		ar = hiddenAreas(size)
	}
	oldRaw := make([]byte, headerSize)
	if err := readFullAt(dev, oldRaw, f.loc.Offset); err != nil {
		clear(pass)
		return nil, err
	}
	h := *f.hdr
	if err := ent.fill(h.Keys[:]); err != nil {
		clear(pass)
		return nil, err
	}
	h.MinVersion = minVersionReencrypt
	h.Flags |= flagReencrypt
	r := &Reencryption{
		dev: dev, areas: ar, trans: &h, newScheme: scheme{Chain: chain, Mode: "xts"},
		kdf: f.kdf, pass: pass, ent: ent, oldKey: append([]byte(nil), f.hdr.Keys[:f.scheme.keyBytes()]...),
	}
	if err := r.setup(off, span, first, &f.scheme); err != nil {
		r.Close()
		return nil, err
	}
	sealed, err := sealHeaderCopies(ctx, &h, r.newScheme, r.kdf, pass, ent)
	if err != nil {
		r.Close()
		return nil, err
	}
	testHookBeforeHeaderWrite()
	if err := before.Check(dev); err != nil {
		r.Close()
		return nil, err
	}
	// The old header's copy and the first journal record go where nothing
	// refers to them yet; then the transition header, primary first.
	for _, a := range []int64{ar.primary, ar.backup} {
		if err := writeFullAt(dev, oldRaw, a+oldHeaderOffset); err != nil {
			r.Close()
			return nil, err
		}
	}
	if err := r.writeJournal(false, 0, 0, nil); err != nil {
		r.Close()
		return nil, err
	}
	for i, a := range []int64{ar.primary, ar.backup} {
		if err := writeFullAt(dev, sealed[i], a); err != nil {
			r.Close()
			return nil, err
		}
		if err := dev.Sync(); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// EncryptRoom is how many bytes at the end of a plain image StartEncrypt
// needs free: the data moves up by a header group, and the backup header
// group follows it.
const EncryptRoom = 2 * headerGroupSize

// StartEncrypt begins turning the plain image on dev into a VeraCrypt (or,
// with o.TrueCrypt, TrueCrypt) volume with the credentials and o's cipher
// and PRF: its first Size()-EncryptRoom bytes become the data area, moved
// up by 128 KiB to make room for the header group. The caller has made
// sure the last EncryptRoom bytes hold nothing (the filesystem ends
// before them). Only the backup header area, at the very end, is written
// here; package volume/reencrypt moves and encrypts the data and finally
// writes the primary header area over what was the start of the image.
func StartEncrypt(ctx context.Context, dev volume.Device, creds volume.Credentials, o CreateOptions) (*Reencryption, error) {
	size := dev.Size()
	if size%dataUnitSize != 0 {
		return nil, volume.InvalidOptionf("the image size must be a multiple of %d bytes (got %d)", dataUnitSize, size)
	}
	span := size - EncryptRoom
	if span < minDataSize {
		return nil, fmt.Errorf("%w: a %d-byte image leaves no room for %d bytes of headers", ErrTooSmall, size, EncryptRoom)
	}
	chain, k, err := resolveCreate(&o, creds.PIM)
	if err != nil {
		return nil, err
	}
	ent, err := newEntropy(o.Random)
	if err != nil {
		return nil, err
	}
	pass, err := passwordInput(creds.Password, creds.Keyfiles, !o.TrueCrypt)
	if err != nil {
		return nil, err
	}
	h := &header{Magic: "VERA", Version: headerVersion, MinVersion: minVersionReencrypt, SectorSize: dataUnitSize,
		VolumeSize: uint64(span), EncStart: headerGroupSize, EncSize: uint64(span), Flags: flagReencrypt | flagReencryptShift}
	if o.TrueCrypt {
		h.Magic = "TRUE"
	}
	if err := ent.fill(h.Keys[:]); err != nil {
		clear(pass)
		return nil, err
	}
	r := &Reencryption{dev: dev, areas: normalAreas(size), shift: true, trans: h,
		newScheme: scheme{Chain: chain, Mode: "xts"}, kdf: k, pass: pass, ent: ent}
	if err := r.setup(headerGroupSize, span, headerGroupSize/dataUnitSize, nil); err != nil {
		r.Close()
		return nil, err
	}
	sealed, err := sealHeader(ctx, h, r.newScheme, k, pass, ent)
	if err != nil {
		r.Close()
		return nil, err
	}
	// The backup header area: random filler, the transition header, the
	// first journal record.
	junk, err := ent.bytes(headerGroupSize)
	if err != nil {
		r.Close()
		return nil, err
	}
	copy(junk, sealed)
	if err := writeFullAt(dev, junk, r.areas.backup); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.writeJournal(false, 0, 0, nil); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// setup derives the journal key and fills in the plan for a data area of
// span bytes at off (sector first), under old (nil: plain) and the new
// scheme.
func (r *Reencryption) setup(off, span int64, first uint64, old *scheme) error {
	kb := r.newScheme.keyBytes()
	newMode, err := r.newScheme.dataMode(r.trans.Keys[:kb])
	if err != nil {
		return fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	jk := journalKey(r.trans.Keys[:kb], kb)
	r.jkey, err = xtsMode(r.newScheme.Chain, jk, 512)
	clear(jk)
	if err != nil {
		return err
	}
	format := "veracrypt"
	if r.trans.Magic == "TRUE" {
		format = "truecrypt"
	}
	r.plan = volume.ReencryptPlan{
		Format: format, Size: span,
		New:        volume.ReencryptSide{Mode: newMode, SectorSize: dataUnitSize, Offset: off, FirstSector: first},
		Resilience: volume.ResilienceChecksum, Hash: "sha256", BlockSize: journalBlock, SumSize: journalSum,
		MaxChunk: journalMaxSums * journalBlock, Align: journalBlock,
	}
	if old != nil {
		oldMode, err := old.dataMode(r.oldKey)
		if err != nil {
			return fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
		}
		r.plan.Old = volume.ReencryptSide{Mode: oldMode, SectorSize: dataUnitSize, Offset: off, FirstSector: first}
	}
	if r.shift {
		r.plan.Encrypt, r.plan.Backward = true, true
		r.plan.Old = volume.ReencryptSide{SectorSize: dataUnitSize}
		r.plan.Resilience, r.plan.Hash, r.plan.BlockSize, r.plan.SumSize = volume.ResilienceDataShift, "", 0, 0
		r.plan.MaxChunk, r.plan.Align = headerGroupSize, dataUnitSize
		r.plan.Done = span
	}
	return nil
}

// sealHeaderCopies is sealHeader for a header's primary and backup copy,
// each with a fresh salt, their keys derived together (kdf.DeriveMany:
// two PBKDF2 derivations in the lanes of one cost little more than one;
// a start and a finish seal a pair each).
func sealHeaderCopies(ctx context.Context, h *header, s scheme, k kdfCandidate, pass []byte, ent *entropy) ([2][]byte, error) {
	var raws [2][]byte
	salts := make([][]byte, len(raws))
	for i := range raws {
		raws[i] = make([]byte, headerSize)
		if err := ent.fill(raws[i][:saltSize]); err != nil {
			return raws, err
		}
		salts[i] = raws[i][:saltSize]
	}
	keys, err := kdf.DeriveMany(ctx, k.params(), pass, salts, headerKeySize)
	if err != nil {
		return raws, err
	}
	defer func() {
		for _, key := range keys {
			clear(key)
		}
	}()
	for i, key := range keys {
		plain := h.marshal()
		err := s.encryptHeader(plain, key)
		copy(raws[i][saltSize:], plain)
		clear(plain)
		if err != nil {
			return [2][]byte{}, err
		}
	}
	return raws, nil
}

// journalKey derives the key that encrypts journal records from the new
// master key: SHA-512 over a label, a counter and the key, as many blocks
// as the chain's XTS keys need.
func journalKey(master []byte, n int) []byte {
	out := make([]byte, 0, n+sha512.Size)
	for i := byte(0); len(out) < n; i++ {
		h := sha512.New()
		h.Write([]byte("cryptvol re-encryption journal"))
		h.Write([]byte{i})
		h.Write(master)
		out = h.Sum(out)
	}
	clear(out[n:])
	return out[:n]
}

// journalLocations are where the records alternate: one in each header
// area, or (encrypting a plain image, whose primary area is still data)
// both in the backup area.
func (r *Reencryption) journalLocations() [2]int64 {
	if r.shift {
		return [2]int64{r.areas.backup + journalOffset, r.areas.backup + journalOffset + journalSize}
	}
	return [2]int64{r.areas.primary + journalOffset, r.areas.backup + journalOffset}
}

// journal is a decoded record.
type journal struct {
	seq         uint64
	hot         bool
	done        int64
	off, length int64
	span        int64 // bytes of the data area re-encrypted
	sums        []byte
}

// writeJournal writes the next record and syncs.
func (r *Reencryption) writeJournal(hot bool, off, n int64, sums []byte) error {
	if len(sums) > journalMaxSums*journalSum {
		return fmt.Errorf("internal error: %d bytes of checksums do not fit the journal", len(sums))
	}
	r.seq++
	b := make([]byte, journalSize)
	copy(b, journalMagic)
	binary.BigEndian.PutUint16(b[4:], 1)
	if hot {
		binary.BigEndian.PutUint16(b[6:], 1)
	}
	binary.BigEndian.PutUint64(b[8:], r.seq)
	binary.BigEndian.PutUint64(b[16:], uint64(r.plan.Done))
	binary.BigEndian.PutUint64(b[24:], uint64(off))
	binary.BigEndian.PutUint64(b[32:], uint64(n))
	binary.BigEndian.PutUint64(b[40:], uint64(r.plan.Size))
	binary.BigEndian.PutUint32(b[48:], journalBlock)
	binary.BigEndian.PutUint16(b[52:], journalSum)
	binary.BigEndian.PutUint32(b[88:], uint32(len(sums)/journalSum))
	copy(b[journalHeader:], sums)
	sum := sha256.Sum256(b)
	copy(b[56:88], sum[:])
	loc := r.journalLocations()[r.seq%2]
	r.jkey.Encrypt(b, b, uint64(loc/512))
	if err := writeFullAt(r.dev, b, loc); err != nil {
		return err
	}
	return r.dev.Sync()
}

// errNoJournal: neither journal slot holds a valid record.
var errNoJournal = fmt.Errorf("%w: the re-encryption journal is unreadable in both of its slots", volume.ErrDamaged)

// readJournal returns the valid record with the highest sequence number.
func (r *Reencryption) readJournal() (*journal, error) {
	var best *journal
	for _, loc := range r.journalLocations() {
		b := make([]byte, journalSize)
		if err := readFullAt(r.dev, b, loc); err != nil {
			continue
		}
		r.jkey.Decrypt(b, b, uint64(loc/512))
		var want [32]byte
		copy(want[:], b[56:88])
		clear(b[56:88])
		if string(b[:4]) != journalMagic || binary.BigEndian.Uint16(b[4:]) != 1 || sha256.Sum256(b) != want {
			continue
		}
		j := &journal{
			seq:    binary.BigEndian.Uint64(b[8:]),
			hot:    binary.BigEndian.Uint16(b[6:])&1 != 0,
			done:   int64(binary.BigEndian.Uint64(b[16:])),
			off:    int64(binary.BigEndian.Uint64(b[24:])),
			length: int64(binary.BigEndian.Uint64(b[32:])),
			span:   int64(binary.BigEndian.Uint64(b[40:])),
		}
		nsums := int(binary.BigEndian.Uint32(b[88:]))
		if binary.BigEndian.Uint32(b[48:]) != journalBlock || binary.BigEndian.Uint16(b[52:]) != journalSum || nsums > journalMaxSums {
			continue
		}
		j.sums = append([]byte(nil), b[journalHeader:journalHeader+nsums*journalSum]...)
		if best == nil || j.seq > best.seq {
			best = j
		}
	}
	if best == nil {
		return nil, errNoJournal
	}
	return best, nil
}

// CommitHot implements volume.Reencryption: a journal record with the
// chunk's checksums (datashift: nothing, the old copy is intact).
func (r *Reencryption) CommitHot(ctx context.Context, off, n int64, prot []byte) error {
	if r.shift {
		return nil
	}
	if r.plan.Backward {
		r.plan.Done, r.hotEnd = off+n, off
	} else {
		r.plan.Done, r.hotEnd = off, off+n
	}
	r.hot = true
	return r.writeJournal(true, off, n, prot)
}

// CommitDone implements volume.Reencryption.
func (r *Reencryption) CommitDone(ctx context.Context, done int64) error {
	r.plan.Done, r.hot = done, false
	r.plan.Hot = nil
	return r.writeJournal(false, 0, 0, nil)
}

// Finish implements volume.Reencryption: the new header replaces the
// transition header in both copies, primary first, and the header areas'
// re-encryption state is wiped. The last journal record may still be
// the last chunk's hot one (the engine wrote and synced that chunk and
// commits it no further): until the new header lands, a resume finds the
// chunk all new.
func (r *Reencryption) Finish(ctx context.Context) error {
	end := r.plan.Size
	if r.plan.Backward {
		end = 0
	}
	if r.plan.Done != end && !(r.hot && r.hotEnd == end) {
		return fmt.Errorf("internal error: finishing a re-encryption at %d of %d bytes", r.plan.Done, r.plan.Size)
	}
	h := *r.trans
	defer clear(h.Keys[:])
	h.Flags &^= flagReencrypt | flagReencryptShift
	h.MinVersion = veraCryptMinVer
	if h.Magic == "TRUE" {
		h.MinVersion = trueCryptMinVer
	}
	sealed, err := sealHeaderCopies(ctx, &h, r.newScheme, r.kdf, r.pass, r.ent)
	if err != nil {
		return err
	}
	if r.shift {
		// What was the start of the image becomes the primary header
		// area: random filler first, so no plaintext stays.
		junk, err := r.ent.bytes(headerGroupSize)
		if err != nil {
			return err
		}
		if err := writeFullAt(r.dev, junk, r.areas.primary); err != nil {
			return err
		}
	}
	for i, a := range []int64{r.areas.primary, r.areas.backup} {
		if err := writeFullAt(r.dev, sealed[i], a); err != nil {
			return err
		}
		if err := r.dev.Sync(); err != nil {
			return err
		}
	}
	// The old header's copies and the journal go back to random filler.
	for _, a := range []int64{r.areas.primary, r.areas.backup} {
		if r.shift && a == r.areas.primary {
			continue
		}
		junk, err := r.ent.bytes(headerGroupSize/2 - headerSize)
		if err != nil {
			return err
		}
		if err := writeFullAt(r.dev, junk, a+headerSize); err != nil {
			return err
		}
	}
	if err := r.dev.Sync(); err != nil {
		return err
	}
	// Done: the plan says so, whether or not the last chunk was
	// committed before Finish.
	r.plan.Done, r.plan.Hot, r.hot = end, nil, false
	return nil
}

// ResumeReencrypt picks up the re-encryption in progress on dev: the
// credentials open the transition header (and the old header's copy),
// the journal says how far it got.
func ResumeReencrypt(ctx context.Context, dev volume.Device, creds volume.Credentials, o volume.Options) (*Reencryption, error) {
	if o.System {
		return nil, ErrNotReencrypting
	}
	size := dev.Size()
	f, err := unlockHeader(ctx, dev, creds, o, headerLocations(size, o))
	if err != nil {
		return nil, err
	}
	if !f.hdr.reencrypting() {
		clear(f.hdr.Keys[:])
		return nil, ErrNotReencrypting
	}
	vera := f.hdr.Magic == "VERA"
	pass, err := passwordInput(creds.Password, creds.Keyfiles, vera)
	if err != nil {
		clear(f.hdr.Keys[:])
		return nil, err
	}
	ent, err := newEntropy(nil)
	if err != nil {
		return nil, err
	}
	r := &Reencryption{dev: dev, trans: f.hdr, newScheme: f.scheme, kdf: f.kdf, pass: pass, ent: ent,
		shift: f.hdr.Flags&flagReencryptShift != 0}
	r.areas = normalAreas(size)
	if f.loc.Hidden {
		r.areas = hiddenAreas(size)
	}
	var old *scheme
	if !r.shift {
		// The old header's copy opens with the same password and PRF.
		oo := o
		oo.Hash, oo.Encryption = f.kdf.PRF, ""
		oo.Type = map[bool]string{true: "veracrypt", false: "truecrypt"}[vera]
		locs := []location{{Offset: r.areas.primary + oldHeaderOffset, Hidden: f.loc.Hidden}, {Offset: r.areas.backup + oldHeaderOffset, Hidden: f.loc.Hidden}}
		of, err := unlockHeader(ctx, dev, creds, oo, locs)
		if err != nil {
			r.Close()
			if errors.Is(err, volume.ErrWrongPassword) {
				return nil, fmt.Errorf("%w: the copy of the old header, which holds the old key, does not open", volume.ErrDamaged)
			}
			return nil, err
		}
		r.oldKey = append([]byte(nil), of.hdr.Keys[:of.scheme.keyBytes()]...)
		clear(of.hdr.Keys[:])
		old = &of.scheme
	}
	off, dsize, first := dataArea(f, size)
	if err := r.setup(off, dsize, first, old); err != nil {
		r.Close()
		return nil, err
	}
	j, err := r.readJournal()
	if err != nil && r.shift && errors.Is(err, errNoJournal) {
		// Encrypting a plain image keeps both journal slots in the
		// backup area, which StartEncrypt filled with random bytes:
		// neither slot valid means its first record never landed, and
		// nothing of the image was moved or encrypted before that
		// record was durable. The image is as it was.
		r.Close()
		return nil, ErrNotReencrypting
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	r.seq = j.seq
	// The span leaves out a protected hidden volume's part.
	if j.span <= 0 || j.span > dsize || j.span%dataUnitSize != 0 || j.done < 0 || j.done > j.span {
		r.Close()
		return nil, fmt.Errorf("%w: the re-encryption journal says %d bytes of %d are done, of a %d-byte data area", volume.ErrDamaged, j.done, j.span, dsize)
	}
	r.plan.Size, r.plan.Done = j.span, j.done
	if j.hot {
		r.plan.Hot = &volume.ReencryptHot{Offset: j.off, Length: j.length, Protection: j.sums}
	}
	return r, nil
}

// readFullAt reads len(b) bytes at off.
func readFullAt(dev volume.Device, b []byte, off int64) error {
	n, err := dev.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading %d bytes at %d: %w", len(b), off, err)
}

// writeFullAt writes b at off.
func writeFullAt(dev volume.Device, b []byte, off int64) error {
	n, err := dev.WriteAt(b, off)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}
