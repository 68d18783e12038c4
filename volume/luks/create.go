package luks

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strings"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// CreateOptions describe a new LUKS volume, with cryptsetup luksFormat's
// options and defaults (cryptsetup 2.6).
type CreateOptions struct {
	// Type is "luks2" (default) or "luks1".
	Type string
	// Cipher is the data cipher in cryptsetup's spelling (--cipher),
	// default "aes-xts-plain64".
	Cipher string
	// KeySize is the volume key size in bits (--key-size): default 512 for
	// XTS, 256 otherwise.
	KeySize int
	// KeyslotCipher is the LUKS2 keyslot area cipher (--keyslot-cipher),
	// by default the data cipher; its key is as long as the volume key
	// (--keyslot-key-size is not supported). LUKS1 always uses the data
	// cipher.
	KeyslotCipher string
	// KDF chooses the keyslot's key derivation (--pbkdf, --hash,
	// --iter-time, --pbkdf-memory, --pbkdf-parallel,
	// --pbkdf-force-iterations). For LUKS1, KDF.Hash is also the header's
	// hash (AF splitter and digest).
	KDF KDFOptions
	// SectorSize is the LUKS2 encryption sector size (--sector-size): 512,
	// 1024, 2048 or 4096. 0 picks 4096 when the data area is a multiple of
	// 4096 bytes and 512 otherwise, as luksFormat does on a file.
	SectorSize int
	// Label and Subsystem are LUKS2 header labels (--label, --subsystem).
	Label, Subsystem string
	// UUID is the volume UUID (--uuid); empty generates a random one.
	UUID string
	// DataOffset is where the data area starts in bytes (--offset × 512);
	// 0 is the default: 16 MiB for LUKS2, the keyslots rounded up to 1 MiB
	// for LUKS1, and 0 with a detached header.
	DataOffset int64
	// MetadataSize is LUKS2's header copy size (--luks2-metadata-size,
	// 16 KiB to 4 MiB, default 16 KiB); KeyslotsSize the keyslots area
	// (--luks2-keyslots-size, default: what fits before the data).
	MetadataSize int64
	KeyslotsSize int64
	// KeySlot puts the first passphrase into this keyslot (--key-slot);
	// nil means keyslot 0.
	KeySlot *int
	// Header is a detached header device (--header); the header goes
	// there and the whole data device (from DataOffset) holds data. It may
	// be an empty file: it grows as the header is written.
	Header volume.Device
	// VolumeKey, if set, is used instead of a random volume key
	// (--volume-key-file).
	VolumeKey []byte
	// Quick skips filling the data area (--quick); otherwise it is filled
	// with data encrypted under a throw-away key, so it is
	// indistinguishable from the data written later.
	Quick bool
	// Progress, if set, is called as the data area is filled.
	Progress func(done, total int64)
	// Rand is the randomness source; nil means crypto/rand.
	Rand io.Reader
}

var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// newUUID makes a random (version 4) UUID.
func newUUID(rnd io.Reader) (string, error) {
	b, err := randomBytes(rnd, 16)
	if err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// layout is what Create computed.
type layout struct {
	version    int
	spec       CipherSpec
	keyBytes   int
	sectorSize int
	dataOffset int64
	dataSize   int64
	hdrSize    uint64 // LUKS2 metadata size
	keyslots   uint64 // LUKS2 keyslots area size
	uuid       string
	slot       int
	kdf        KDFOptions
	slotSpec   CipherSpec
}

func (o *CreateOptions) plan(dev volume.Device, rnd io.Reader) (*layout, error) {
	l := &layout{version: 2}
	switch strings.ToLower(o.Type) {
	case "", "luks", "luks2":
	case "luks1":
		l.version = 1
	default:
		return nil, fmt.Errorf("unknown LUKS type %q (want luks1 or luks2)", o.Type)
	}
	cipher := o.Cipher
	if cipher == "" {
		cipher = "aes-xts-plain64"
	}
	spec, err := ParseCipherSpec(cipher)
	if err != nil {
		return nil, err
	}
	l.spec = spec
	bits := o.KeySize
	if bits == 0 {
		bits = 256
		if spec.Chain == "xts" {
			bits = 512
		}
	}
	if bits%8 != 0 || bits <= 0 {
		return nil, fmt.Errorf("key size %d bits is not a whole number of bytes", bits)
	}
	l.keyBytes = bits / 8
	if o.VolumeKey != nil && len(o.VolumeKey) != l.keyBytes {
		return nil, fmt.Errorf("the volume key has %d bits, --key-size says %d", len(o.VolumeKey)*8, bits)
	}
	if err := spec.Check(l.keyBytes); err != nil {
		return nil, err
	}
	if l.slotSpec, err = keyslotSpec(o.KeyslotCipher, spec, l.keyBytes, l.version); err != nil {
		return nil, err
	}
	if l.kdf, err = o.KDF.resolved(l.version); err != nil {
		return nil, err
	}
	l.uuid = o.UUID
	if l.uuid == "" {
		if l.uuid, err = newUUID(rnd); err != nil {
			return nil, err
		}
	} else if !uuidRE.MatchString(l.uuid) {
		return nil, fmt.Errorf("invalid UUID %q", l.uuid)
	}
	if o.KeySlot != nil {
		l.slot = *o.KeySlot
	}
	maxSlot := luks1NumKeys
	if l.version == 2 {
		maxSlot = 32
	}
	if l.slot < 0 || l.slot >= maxSlot {
		return nil, fmt.Errorf("keyslot %d out of range 0..%d", l.slot, maxSlot-1)
	}
	if o.DataOffset < 0 || o.DataOffset%512 != 0 {
		return nil, fmt.Errorf("data offset %d is not a multiple of 512", o.DataOffset)
	}
	detached := o.Header != nil
	if l.version == 1 {
		if o.Label != "" || o.Subsystem != "" {
			return nil, errors.New("labels need LUKS2 (--type luks2)")
		}
		if o.SectorSize != 0 && o.SectorSize != 512 {
			return nil, errors.New("LUKS1 supports only 512-byte sectors")
		}
		l.sectorSize = 512
		end := luks1SlotsEnd(l.keyBytes)
		switch {
		case o.DataOffset != 0:
			l.dataOffset = o.DataOffset
			if !detached && l.dataOffset < end {
				return nil, fmt.Errorf("data offset %d is inside the %d-byte LUKS1 header", l.dataOffset, end)
			}
		case !detached:
			l.dataOffset = (end + 1<<20 - 1) &^ (1<<20 - 1)
		}
	} else {
		if len(o.Label) >= labelLen || len(o.Subsystem) >= labelLen {
			return nil, fmt.Errorf("label and subsystem are at most %d bytes", labelLen-1)
		}
		l.hdrSize = uint64(o.MetadataSize)
		if l.hdrSize == 0 {
			l.hdrSize = minHeaderSize
		}
		if !validHeaderSize(l.hdrSize) {
			return nil, fmt.Errorf("LUKS2 metadata size %d: want 16 KiB, 32 KiB, ... or 4 MiB", l.hdrSize)
		}
		l.dataOffset = o.DataOffset
		if l.dataOffset == 0 && !detached {
			l.dataOffset = 16 << 20
		}
		ks := uint64(o.KeyslotsSize)
		if ks == 0 {
			ks = 16<<20 - 2*l.hdrSize
			if !detached && uint64(l.dataOffset) > 2*l.hdrSize {
				ks = uint64(l.dataOffset) - 2*l.hdrSize
			}
			ks = min(ks, maxKeyslotsSize) &^ 4095
		}
		if ks%4096 != 0 || ks > maxKeyslotsSize || ks < luks2AreaSize(l.keyBytes, luks1Stripes) {
			return nil, fmt.Errorf("keyslots area of %d bytes: want a multiple of 4096 from %d to %d", ks, luks2AreaSize(l.keyBytes, luks1Stripes), maxKeyslotsSize)
		}
		l.keyslots = ks
		if !detached && uint64(l.dataOffset) < 2*l.hdrSize+ks {
			return nil, fmt.Errorf("data offset %d is inside the %d-byte LUKS2 header and keyslots", l.dataOffset, 2*l.hdrSize+ks)
		}
	}
	if dev.Size() <= l.dataOffset {
		return nil, fmt.Errorf("the device (%d bytes) is too small: the data area would start at %d", dev.Size(), l.dataOffset)
	}
	l.dataSize = dev.Size() - l.dataOffset
	if l.version == 2 {
		switch ss := o.SectorSize; ss {
		case 0:
			l.sectorSize = 512
			if l.dataSize%4096 == 0 && l.dataOffset%4096 == 0 {
				l.sectorSize = 4096
			}
		case 512, 1024, 2048, 4096:
			l.sectorSize = ss
			if l.dataSize%int64(ss) != 0 || l.dataOffset%int64(ss) != 0 {
				return nil, fmt.Errorf("the data area (%d bytes at %d) is not aligned to the %d-byte sector size", l.dataSize, l.dataOffset, ss)
			}
		default:
			return nil, fmt.Errorf("sector size %d: want 512, 1024, 2048 or 4096", ss)
		}
	}
	l.dataSize -= l.dataSize % int64(l.sectorSize)
	return l, nil
}

// keyslotSpec resolves the cipher of keyslot areas: the data cipher unless
// another is asked for (LUKS2 only).
func keyslotSpec(name string, data CipherSpec, keyBytes, version int) (CipherSpec, error) {
	if name == "" {
		return data, nil
	}
	if version == 1 {
		return data, errors.New("a separate keyslot cipher needs LUKS2")
	}
	s, err := ParseCipherSpec(name)
	if err != nil {
		return s, fmt.Errorf("keyslot cipher: %w", err)
	}
	if err := s.Check(keyBytes); err != nil {
		return s, fmt.Errorf("keyslot cipher: %w", err)
	}
	return s, nil
}

// luks1SlotsEnd is where the eighth LUKS1 keyslot ends for a key of
// keyBytes, with cryptsetup's 4096-byte keyslot alignment.
func luks1SlotsEnd(keyBytes int) int64 {
	return luks1SlotOffset(keyBytes, luks1NumKeys) * 512
}

// luks1SlotOffset is keyslot i's key material offset in sectors.
func luks1SlotOffset(keyBytes, i int) int64 {
	per := (afSectors(keyBytes, luks1Stripes) + 7) &^ 7
	return luks1AlignKeyslots/512 + int64(i)*per
}

// Created is the result of Create.
type Created struct {
	// Header is what the new header says (as Inspect reads it back).
	Header *Header
	// Unlocked describes the data area with the new volume key, ready for
	// volume.New (to format a filesystem into it). Its MasterKey is the
	// caller's to wipe (volume.Volume.Close does).
	Unlocked *volume.Unlocked
}

// Create formats dev as a LUKS volume protected by the passphrase the
// credentials stand for (see Passphrase). Everything from the start of the
// device (or of the detached header) to the data area is overwritten.
func Create(ctx context.Context, dev volume.Device, o CreateOptions, creds volume.Credentials) (*Created, error) {
	rnd := orRand(o.Rand)
	// Everything plan refuses is an option; so are credentials that give
	// no passphrase (a key file that cannot be read included, which the
	// CLI has always reported as a usage error). Errors after this point
	// (writing the device, reading it back) are not option errors.
	l, err := o.plan(dev, rnd)
	if err != nil {
		return nil, volume.InvalidOption(err)
	}
	pass, err := Passphrase(creds)
	if err != nil {
		return nil, volume.InvalidOption(err)
	}
	defer clear(pass)
	mk := append([]byte(nil), o.VolumeKey...)
	if mk == nil {
		if mk, err = randomBytes(rnd, l.keyBytes); err != nil {
			return nil, err
		}
	}
	defer clear(mk)
	kp, err := l.kdf.params(ctx, l.keyBytes)
	if err != nil {
		return nil, err
	}
	digestHash := l.kdf.Hash
	dIter, err := digestIterations(ctx, digestHash, l.keyBytes, l.kdf.Iterations != 0)
	if err != nil {
		return nil, err
	}
	var hdr volume.Device = dev
	grow := false
	if o.Header != nil {
		hdr, grow = &growingDevice{Device: o.Header, size: o.Header.Size()}, true
	}
	if l.version == 1 {
		err = createLUKS1(ctx, hdr, grow, l, mk, pass, kp, dIter, rnd)
	} else {
		err = createLUKS2(ctx, hdr, grow, l, o, mk, pass, kp, digestHash, dIter, rnd)
	}
	if err != nil {
		return nil, err
	}
	if !o.Quick {
		if err := fillData(ctx, dev, l, o.Progress, rnd); err != nil {
			return nil, err
		}
	}
	if err := dev.Sync(); err != nil {
		return nil, err
	}
	if o.Header != nil {
		if err := o.Header.Sync(); err != nil {
			return nil, err
		}
	}
	h, err := Inspect(hdr)
	if err != nil {
		return nil, err
	}
	u, err := unlockWithKey(hdr, dev, mk, l.slot)
	if err != nil {
		return nil, err
	}
	return &Created{Header: h, Unlocked: u}, nil
}

// unlockWithKey describes the data area of a volume whose key is known.
func unlockWithKey(hdr, dev volume.Device, mk []byte, slot int) (*volume.Unlocked, error) {
	l, err := load(hdr, "luks")
	if err != nil {
		return nil, err
	}
	got := &opened{slot: slot, key: append([]byte(nil), mk...)}
	detached := hdr != dev
	if h := l.v1; h != nil {
		off := int64(h.PayloadOff) * 512
		size, err := dataArea(dev, off, 0, 512, h.areaEnd(), detached)
		if err != nil {
			return nil, err
		}
		return luks1Unlocked(h, got, off, size)
	}
	h := l.v2
	seg, err := h.dataSegment()
	if err != nil {
		return nil, err
	}
	size, err := dataArea(dev, seg.Offset, seg.Size, seg.SectorSize, h.areaEnd(), detached)
	if err != nil {
		return nil, err
	}
	return luks2Unlocked(h, seg, got, len(mk), size)
}

// zeroArea writes zeros over [0, n) of the header device.
func zeroArea(dev volume.Device, n int64, grow bool) error {
	buf := make([]byte, 1<<20)
	for off := int64(0); off < n; off += int64(len(buf)) {
		k := min(int64(len(buf)), n-off)
		if err := writeAt(dev, buf[:k], off, grow); err != nil {
			return err
		}
	}
	return nil
}

func createLUKS1(ctx context.Context, hdr volume.Device, grow bool, l *layout, mk, pass []byte, kp kdf.Params, dIter int, rnd io.Reader) error {
	h := &luks1Header{
		CipherName: l.spec.Cipher, CipherMode: l.spec.Mode(), HashSpec: l.kdf.Hash,
		PayloadOff: uint32(l.dataOffset / 512), KeyBytes: uint32(l.keyBytes),
		MKDigestIter: uint32(dIter), UUID: l.uuid, spec: l.spec,
	}
	if l.dataOffset/512 > 1<<32-1 {
		return volume.InvalidOptionf("data offset %d too large for LUKS1", l.dataOffset)
	}
	salt, err := randomBytes(rnd, luks1SaltSize)
	if err != nil {
		return err
	}
	copy(h.MKDigestSalt[:], salt)
	hs, _ := lookupHash(h.HashSpec)
	copy(h.MKDigest[:], kdf.PBKDF2(hs, mk, salt, dIter, luks1DigestSize))
	for i := range h.Slots {
		h.Slots[i] = luks1Slot{Active: luks1SlotDisabled, Offset: uint32(luks1SlotOffset(l.keyBytes, i)), Stripes: luks1Stripes}
	}
	material, err := sealLUKS1Slot(ctx, h, l.slot, mk, pass, int(kp.Iterations), rnd)
	if err != nil {
		return err
	}
	defer clear(material)
	end := h.areaEnd()
	if !grow {
		end = max(end, l.dataOffset)
	}
	if err := zeroArea(hdr, end, grow); err != nil {
		return err
	}
	off, _ := h.slotMaterial(l.slot)
	if err := writeAt(hdr, material, off, grow); err != nil {
		return err
	}
	return writeAt(hdr, h.marshal(), 0, grow)
}

func createLUKS2(ctx context.Context, hdr volume.Device, grow bool, l *layout, o CreateOptions, mk, pass []byte, kp kdf.Params, digestHash string, dIter int, rnd io.Reader) error {
	dsalt, err := randomBytes(rnd, saltSize)
	if err != nil {
		return err
	}
	hs, _ := lookupHash(digestHash)
	digest := kdf.PBKDF2(hs, mk, dsalt, dIter, hs.Size)
	slotID := fmt.Sprint(l.slot)
	areaOff := 2 * l.hdrSize
	slot, material, err := newLUKS2Keyslot(ctx, mk, pass, kp, l.slotSpec, digestHash, areaOff, rnd)
	if err != nil {
		return err
	}
	defer clear(material)
	raw := map[string]any{
		"keyslots": map[string]any{slotID: slot},
		"tokens":   map[string]any{},
		"segments": map[string]any{"0": map[string]any{
			"type": "crypt", "offset": fmt.Sprint(l.dataOffset), "size": "dynamic", "iv_tweak": "0",
			"encryption": l.spec.String(), "sector_size": int64(l.sectorSize),
		}},
		"digests": map[string]any{"0": map[string]any{
			"type": "pbkdf2", "keyslots": []any{slotID}, "segments": []any{"0"}, "hash": digestHash,
			"iterations": int64(dIter), "salt": base64.StdEncoding.EncodeToString(dsalt),
			"digest": base64.StdEncoding.EncodeToString(digest),
		}},
		"config": map[string]any{"json_size": fmt.Sprint(l.hdrSize - binHeaderSize), "keyslots_size": fmt.Sprint(l.keyslots)},
	}
	meta, err := (&metadata{raw: raw}).reparse(l.hdrSize)
	if err != nil {
		return fmt.Errorf("internal error building LUKS2 metadata: %w", err)
	}
	h := &luks2Header{bin: binHeader{Size: l.hdrSize, Label: o.Label, CsumAlg: "sha256", UUID: l.uuid, Subsystem: o.Subsystem}}
	end := int64(2*l.hdrSize + l.keyslots)
	if !grow {
		end = max(end, l.dataOffset)
	}
	if err := zeroArea(hdr, end, grow); err != nil {
		return err
	}
	if err := writeAt(hdr, material, int64(areaOff), grow); err != nil {
		return err
	}
	// The first commit writes sequence id 1; cryptsetup's luksFormat ends
	// at a higher epoch only because it rewrites the header several times.
	return commitLUKS2(hdr, h, meta, rnd, grow)
}

// fillData encrypts zeros under a throw-away key over the data area.
func fillData(ctx context.Context, dev volume.Device, l *layout, progress func(done, total int64), rnd io.Reader) error {
	key, err := randomBytes(rnd, l.keyBytes)
	if err != nil {
		return err
	}
	m, err := l.spec.NewMode(key, l.sectorSize)
	clear(key)
	if err != nil {
		return err
	}
	m = sector.Parallel(m, runtime.GOMAXPROCS(0))
	const chunk = 4 << 20
	zero := make([]byte, chunk)
	out := make([]byte, chunk)
	ss := int64(l.sectorSize)
	for done := int64(0); done < l.dataSize; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(chunk), l.dataSize-done)
		m.Encrypt(out[:n], zero[:n], uint64(done/ss))
		if err := writeAt(dev, out[:n], l.dataOffset+done, false); err != nil {
			return err
		}
		done += n
		if progress != nil {
			progress(done, l.dataSize)
		}
	}
	return nil
}

// growingDevice is a header file being created: writes past its end
// extend it, and Size follows them.
type growingDevice struct {
	volume.Device
	size int64
}

func (g *growingDevice) Size() int64 { return g.size }

func (g *growingDevice) WriteAt(p []byte, off int64) (int, error) {
	n, err := g.Device.WriteAt(p, off)
	if end := off + int64(n); end > g.size {
		g.size = end
	}
	return n, err
}
