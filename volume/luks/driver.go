// Package luks is the LUKS1 and LUKS2 volume driver (cryptsetup's on-disk
// formats): header parsing with cryptsetup's validation rules, keyslot
// unlocking with PBKDF2, Argon2i and Argon2id tried in parallel, the
// anti-forensic splitter, LUKS2's two checksummed header copies, detached
// headers, volume creation, keyslot management and header backup.
//
// Cipher specifications are dm-crypt's ("aes-xts-plain64",
// "serpent-cbc-essiv:sha256", "capi:xts(aes)-plain64",
// "xchacha12,aes-adiantum-plain64") mapped onto the sector package; a LUKS2
// segment with sectors larger than 512 bytes still counts its IVs in
// 512-byte sectors, from iv_tweak, as cryptsetup activates it (dm-crypt
// without iv_large_sectors; checked against the kernel by
// testdata/adiantum/mkimages.sh).
package luks

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

func init() { volume.Register(driver{}) }

type driver struct{}

func (driver) Name() string { return "luks" }

// HasMagic tells the volume package that a LUKS header always starts with
// its magic, so auto-detection need not try LUKS on files without one.
func (driver) HasMagic() bool { return true }

func (driver) Handles(t string) bool {
	switch t {
	case "", "luks", "luks1", "luks2":
		return true
	}
	return false
}

// Detect recognises the LUKS magic of the primary header.
func (driver) Detect(head []byte) bool { return IsLUKS(head) }

// DetectDevice also finds a LUKS2 volume whose primary header is damaged
// or wiped by the magic of its secondary header, as cryptsetup does.
func (driver) DetectDevice(dev volume.Device) bool { return Present(dev) }

// IsLUKS reports whether head starts with a LUKS1 or LUKS2 primary header.
func IsLUKS(head []byte) bool {
	return len(head) >= 8 && bytes.Equal(head[:6], magic1st)
}

// Present reports whether dev holds a LUKS header: the magic of a primary
// header at 0, or of a LUKS2 secondary header at one of the offsets the
// format allows (the primary may be damaged). No checksum is verified.
func Present(dev volume.Device) bool {
	return primaryMagic(dev) || secondaryAt(dev) >= 0
}

func primaryMagic(dev volume.Device) bool {
	head, err := readAt(dev, 0, 8)
	return err == nil && IsLUKS(head)
}

// secondaryAt is the offset of the first LUKS2 secondary header magic, or
// -1.
func secondaryAt(dev volume.Device) int64 {
	for _, off := range secondaryOffsets {
		if off+binHeaderSize > dev.Size() {
			break
		}
		if m, err := readAt(dev, off, 8); err == nil && bytes.Equal(m[:6], magic2nd) {
			return off
		}
	}
	return -1
}

// headerVersion reads the format version: 1 or 2 from the primary header,
// or 2 when only a LUKS2 secondary header can be found (unless the caller
// asked for LUKS1, which has no secondary).
func headerVersion(dev volume.Device, typ string) (int, error) {
	if dev.Size() >= 8 {
		head, err := readAt(dev, 0, 8)
		if err != nil {
			return 0, err
		}
		if bytes.Equal(head[:6], magic1st) {
			v := int(binary.BigEndian.Uint16(head[6:]))
			if v != 1 && v != 2 {
				return 0, fmt.Errorf("%w: LUKS version %d", volume.ErrUnsupported, v)
			}
			return v, nil
		}
	}
	if typ != "luks1" && secondaryAt(dev) >= 0 {
		return 2, nil // the primary is damaged or wiped: use the secondary copy
	}
	if typ == "luks2" || typ == "luks" {
		return 2, nil // let readLUKS2 report what it finds
	}
	return 0, fmt.Errorf("%w: no LUKS header", volume.ErrWrongPassword)
}

// deviceUUID is the UUID in the header on dev, read from the first header
// copy with a magic even if its checksum fails (LUKS1 and LUKS2 keep it at
// the same place), or "" when there is no LUKS header at all.
func deviceUUID(dev volume.Device) string {
	off := int64(0)
	if !primaryMagic(dev) {
		if off = secondaryAt(dev); off < 0 {
			return ""
		}
	}
	raw, err := readAt(dev, off+168, uuidLen)
	if err != nil {
		return ""
	}
	return cString(raw)
}

// loaded is a header of either version.
type loaded struct {
	v1 *luks1Header
	v2 *luks2Header
}

// load reads the header of dev, of the version typ allows.
func load(dev volume.Device, typ string) (*loaded, error) {
	v, err := headerVersion(dev, typ)
	if err != nil {
		return nil, err
	}
	if (typ == "luks1" && v != 1) || (typ == "luks2" && v != 2) {
		return nil, fmt.Errorf("%w: this is a LUKS%d volume, not %s", volume.ErrWrongPassword, v, typ)
	}
	if v == 1 {
		h, err := readLUKS1(dev)
		if err != nil {
			return nil, err
		}
		return &loaded{v1: h}, nil
	}
	h, err := readLUKS2(dev)
	if err != nil {
		return nil, err
	}
	return &loaded{v2: h}, nil
}

func (driver) Unlock(ctx context.Context, r *volume.Request) (*volume.Unlocked, error) {
	warn := r.Opts.Warn
	if warn == nil {
		warn = func(string) {}
	}
	l, err := load(r.Header, r.Opts.Type)
	if err != nil {
		return nil, err
	}
	snap, err := snapshot(r.Header, l)
	if err != nil {
		return nil, err
	}
	detached := r.Header != r.Dev
	var u *volume.Unlocked
	if l.v2 != nil {
		if l.v2.warning != "" {
			warn(l.v2.warning)
		}
		u, err = unlockLUKS2(ctx, r, l.v2, detached)
	} else {
		u, err = unlockLUKS1(ctx, r, l.v1, detached)
	}
	if u != nil {
		u.Header = snap
	}
	return u, err
}

// snapshot remembers the binary header(s) of l as they are on dev: every
// change of a LUKS header rewrites them (LUKS2 raises the sequence id of
// both copies; LUKS1 keyslot changes touch the keyslot table in the first
// 592 bytes).
func snapshot(dev volume.Device, l *loaded) (*volume.HeaderSnapshot, error) {
	ext := []volume.Extent{{Offset: 0, Length: luks1HeaderSize}}
	if l.v2 != nil {
		ext = []volume.Extent{{Offset: 0, Length: binHeaderSize}, {Offset: int64(l.v2.size()), Length: binHeaderSize}}
	}
	s, err := volume.SnapshotHeader(dev, ext...)
	if err != nil {
		return nil, fmt.Errorf("reading the LUKS header: %w", err)
	}
	return s, nil
}

// dataArea checks and sizes the data area on the data device.
func dataArea(dev volume.Device, off, fixedSize int64, sectorSize int, hdrEnd int64, detached bool) (int64, error) {
	if !detached && off < hdrEnd {
		return 0, fmt.Errorf("%w: the data area at %d overlaps the header and keyslots (which end at %d)", volume.ErrDamaged, off, hdrEnd)
	}
	if off > dev.Size() {
		return 0, fmt.Errorf("%w: the data area starts at %d, beyond the end of the %d-byte device", volume.ErrDamaged, off, dev.Size())
	}
	size := fixedSize
	if size == 0 {
		size = dev.Size() - off
		size -= size % int64(sectorSize)
	}
	if size < 0 {
		return 0, fmt.Errorf("%w: the data area ends before it starts", volume.ErrDamaged)
	}
	return size, nil
}

// warnEmpty reports a header-only device (a detached header opened as the
// volume, or a header backup).
func warnEmpty(r *volume.Request, size int64) {
	if size == 0 && r.Opts.Warn != nil {
		r.Opts.Warn("the data area is empty: the device holds only the LUKS header")
	}
}

func unlockLUKS1(ctx context.Context, r *volume.Request, h *luks1Header, detached bool) (*volume.Unlocked, error) {
	if h.specErr != nil {
		return nil, h.specErr
	}
	off := int64(h.PayloadOff) * 512
	size, err := dataArea(r.Dev, off, 0, 512, h.areaEnd(), detached)
	if err != nil {
		return nil, err
	}
	warnEmpty(r, size)
	pass, err := Passphrase(r.Creds)
	if err != nil {
		return nil, err
	}
	defer clear(pass)
	atts, err := luks1Attempts(r.Header, h, pass, r.Creds.KeySlot)
	if err != nil {
		return nil, err
	}
	got, err := runAttempts(ctx, atts, r.Opts.Progress)
	if err != nil {
		return nil, err
	}
	return luks1Unlocked(h, got, off, size)
}

// luks1Unlocked builds the data-area description for an opened volume key.
func luks1Unlocked(h *luks1Header, got *opened, off, size int64) (*volume.Unlocked, error) {
	mode, err := h.spec.NewMode(got.key, 512)
	if err != nil {
		clear(got.key)
		return nil, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	info := luks1Info(h)
	info.KeySlot = &got.slot
	info.DataOffset, info.DataSize = off, size
	fillSlotKDF(&info, kdfOfLUKS1(h, got.slot))
	return &volume.Unlocked{
		Mode:       mode,
		DataOffset: off,
		DataSize:   size,
		Info:       info,
		MasterKey:  got.key,
		State:      &volume.ModeState{Spec: h.spec.String(), SectorSize: 512, Key: append([]byte(nil), got.key...)},
	}, nil
}

func unlockLUKS2(ctx context.Context, r *volume.Request, h *luks2Header, detached bool) (*volume.Unlocked, error) {
	if err := h.requirementError(); err != nil {
		return nil, err
	}
	seg, err := h.dataSegment()
	if err != nil {
		return nil, err
	}
	kb := h.volumeKeySize(seg.Digest)
	if err := seg.Spec.Check(kb); err != nil {
		return nil, fmt.Errorf("%w: data segment: %v", volume.ErrUnsupported, err)
	}
	per := uint64(seg.SectorSize / 512)
	if seg.IVTweak%per != 0 {
		return nil, fmt.Errorf("%w: iv_tweak %d is not a multiple of the %d-byte sector", volume.ErrDamaged, seg.IVTweak, seg.SectorSize)
	}
	size, err := dataArea(r.Dev, seg.Offset, seg.Size, seg.SectorSize, h.areaEnd(), detached)
	if err != nil {
		return nil, err
	}
	warnEmpty(r, size)
	pass, err := Passphrase(r.Creds)
	if err != nil {
		return nil, err
	}
	defer clear(pass)
	atts, err := luks2Attempts(r.Header, h, seg.Digest, pass, r.Creds.KeySlot)
	if err != nil {
		return nil, err
	}
	got, err := runAttempts(ctx, atts, r.Opts.Progress)
	if err != nil {
		return nil, err
	}
	return luks2Unlocked(h, seg, got, kb, size)
}

// luks2Unlocked builds the data-area description for an opened volume key.
func luks2Unlocked(h *luks2Header, seg *segment, got *opened, kb int, size int64) (*volume.Unlocked, error) {
	per := uint64(seg.SectorSize / 512)
	mode, err := seg.Spec.NewMode(got.key, seg.SectorSize)
	if err != nil {
		clear(got.key)
		return nil, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	info := luks2Info(h, seg, kb)
	info.KeySlot = &got.slot
	info.DataOffset, info.DataSize = seg.Offset, size
	fillSlotKDF(&info, kdfOfLUKS2(h, fmt.Sprint(got.slot)))
	return &volume.Unlocked{
		Mode:        mode,
		DataOffset:  seg.Offset,
		DataSize:    size,
		FirstSector: seg.IVTweak / per,
		Info:        info,
		MasterKey:   got.key,
		State:       &volume.ModeState{Spec: seg.Spec.String(), SectorSize: seg.SectorSize, Key: append([]byte(nil), got.key...)},
	}, nil
}

// ReopenMode rebuilds the data area's mode from the State of an unlocked
// volume (volume.Reopener): the cipher spec, sector size and volume key.
func (driver) ReopenMode(st volume.ModeState) (sector.Mode, error) {
	spec, err := ParseCipherSpec(st.Spec)
	if err == nil {
		err = spec.Check(len(st.Key))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	m, err := spec.NewMode(st.Key, st.SectorSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	return m, nil
}
