// Package tcrypt is the TrueCrypt and VeraCrypt volume driver: normal,
// hidden and system-encrypted volumes, backup headers, keyfiles, PIM,
// Argon2id, and the legacy CBC and LRW formats of TrueCrypt 4.x/5.x
// (read-only).
//
// A header carries no magic in the clear, so opening means deriving a key
// with every plausible KDF and trying every cipher chain until one decrypts
// to a header whose magic and CRCs check out.
package tcrypt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

func init() { volume.Register(driver{}) }

type driver struct{}

func (driver) Name() string { return "tcrypt" }

func (driver) Handles(t string) bool {
	switch t {
	case "", "veracrypt", "truecrypt", "tcrypt":
		return true
	}
	return false
}

// Detect is always false: TrueCrypt headers look like random bytes, so the
// driver is tried by password after the formats that have a magic.
func (driver) Detect(head []byte) bool { return false }

func (driver) Unlock(ctx context.Context, r *volume.Request) (*volume.Unlocked, error) {
	o := r.Opts
	if o.Type == "tcrypt" {
		o.Type = ""
	}
	size := r.Header.Size()
	locs := headerLocations(size, o)
	snap, err := volume.SnapshotHeader(r.Header, headerExtents(locs)...)
	if err != nil {
		return nil, fmt.Errorf("reading the volume header: %w", err)
	}
	f, err := unlockHeader(ctx, r.Header, r.Creds, o, locs)
	if err != nil {
		return nil, err
	}
	if f.hdr.reencrypting() {
		// Half the data is under the old key: no single key shows it.
		clear(f.hdr.Keys[:])
		return nil, volume.ErrReencrypting
	}
	if f.loc.Backup {
		o.Warn = orDiscard(o.Warn)
		o.Warn("the primary volume header is damaged or was overwritten; opened with the backup header (run 'cryptvol header restore' to repair it)")
	}
	u, err := unlocked(f, r.Dev)
	if err != nil {
		return nil, err
	}
	u.Header = snap
	if o.ProtectHidden != nil && !o.Hidden {
		if err := protectHidden(ctx, r, o, u); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// headerExtents are the 512-byte header copies at locs, which a snapshot
// watches.
func headerExtents(locs []location) []volume.Extent {
	ext := make([]volume.Extent, len(locs))
	for i, l := range locs {
		ext[i] = volume.Extent{Offset: l.Offset, Length: headerSize}
	}
	return ext
}

func orDiscard(w func(string)) func(string) {
	if w == nil {
		return func(string) {}
	}
	return w
}

// dataArea locates the encrypted data area and the sector number its
// first sector has as IV/tweak source, following the rules of each header
// generation.
func dataArea(f *found, devSize int64) (offset, size int64, firstSector uint64) {
	h := f.hdr
	encStart := int64(h.EncStart)
	if encStart == 0 {
		encStart = legacyDataOffset
	}
	legacyHidden := devSize - int64(h.HiddenSize) + offHiddenLegacy
	switch {
	case f.loc.System:
		offset = encStart
	case f.scheme.Mode == "xts" && h.Version < 3:
		offset = legacyDataOffset
	case f.scheme.Mode == "xts" && f.loc.Hidden && h.Version == 3:
		offset = legacyHidden
	case f.scheme.Mode != "xts" && f.loc.Hidden:
		offset = legacyHidden
	default:
		offset = encStart
	}
	switch {
	case f.loc.Hidden:
		size = int64(h.HiddenSize)
	case h.VolumeSize != 0:
		size = int64(h.VolumeSize)
	default:
		size = devSize - offset
	}
	size -= size % dataUnitSize
	switch f.scheme.Mode {
	case "xts":
		firstSector = uint64(offset / dataUnitSize)
	case "lrw":
		firstSector = 0
	default: // cbc
		firstSector = uint64(encStart / dataUnitSize)
	}
	return offset, size, firstSector
}

func unlocked(f *found, dev volume.Device) (*volume.Unlocked, error) {
	devSize := dev.Size()
	h := f.hdr
	s := f.scheme
	kb := s.keyBytes()
	if kb > keysSize {
		return nil, fmt.Errorf("%w: %s needs %d key bytes", volume.ErrDamaged, s.Name(), kb)
	}
	mode, err := s.dataMode(h.Keys[:kb])
	if err != nil {
		return nil, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	off, size, first := dataArea(f, devSize)
	if f.loc.System {
		off, size = systemPartition(dev, off, size)
		first = uint64(off / dataUnitSize)
	}
	if off < 0 || size <= 0 {
		return nil, fmt.Errorf("%w: the header describes an empty or impossible data area (offset %d, size %d)", volume.ErrDamaged, off, size)
	}
	format := "truecrypt"
	if h.Magic == "VERA" {
		format = "veracrypt"
	}
	hash := f.kdf.PRF
	info := volume.Info{
		Format:            format,
		Version:           int(h.Version),
		MinProgramVersion: programVersion(h.MinVersion),
		Encryption:        s.Name(),
		Mode:              s.Mode,
		Hash:              hash,
		Iterations:        f.kdf.Iterations,
		KeySize:           kb * 8,
		SectorSize:        int(h.SectorSize),
		DataOffset:        off,
		DataSize:          size,
		Hidden:            f.loc.Hidden,
		System:            f.loc.System || h.Flags&flagSystem != 0,
		BackupHeader:      f.loc.Backup,
	}
	if f.kdf.argon2() {
		info.Hash = "argon2id"
		info.MemoryKiB = f.kdf.MemoryKiB
		info.Parallelism = 1
	}
	if f.loc.Hidden {
		info.HiddenVolumeSize = int64(h.HiddenSize)
	}
	return &volume.Unlocked{
		Mode:        mode,
		DataOffset:  off,
		DataSize:    size,
		FirstSector: first,
		Info:        info,
		ReadOnly:    s.Mode != "xts",
		MasterKey:   displayKey(s, h.Keys[:kb]),
		State:       &volume.ModeState{Spec: s.Mode + ":" + s.Name(), SectorSize: dataUnitSize, Key: append([]byte(nil), h.Keys[:kb]...)},
	}, nil
}

// ReopenMode rebuilds the data area's mode from the State of unlocked
// (volume.Reopener): "MODE:CHAIN" and the key area's bytes.
func (driver) ReopenMode(st volume.ModeState) (sector.Mode, error) {
	mode, chain, ok := strings.Cut(st.Spec, ":")
	c, err := ciphers.LookupChain(chain)
	if !ok || err != nil || st.SectorSize != dataUnitSize {
		return nil, fmt.Errorf("%w: unknown encryption %q", volume.ErrUnsupported, st.Spec)
	}
	s := scheme{Chain: c, Mode: mode}
	if len(st.Key) != s.keyBytes() {
		return nil, fmt.Errorf("%w: %s needs %d key bytes, got %d", volume.ErrDamaged, st.Spec, s.keyBytes(), len(st.Key))
	}
	m, err := s.dataMode(st.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", volume.ErrUnsupported, err)
	}
	return m, nil
}

// displayKey orders the master key as cryptsetup's tcryptDump
// --dump-volume-key prints it: for XTS, each cipher's primary key followed
// by its tweak key, cipher by cipher.
func displayKey(s scheme, keys []byte) []byte {
	if s.Mode != "xts" {
		return append([]byte(nil), keys...)
	}
	n := len(s.Chain.Ciphers)
	half := len(keys) / 2
	per := half / n
	out := make([]byte, 0, len(keys))
	for i := 0; i < n; i++ {
		out = append(out, keys[i*per:(i+1)*per]...)
		out = append(out, keys[half+i*per:half+(i+1)*per]...)
	}
	return out
}

// protectHidden unlocks the hidden volume's header with the protection
// credentials and marks its area of the outer data area as unwritable.
func protectHidden(ctx context.Context, r *volume.Request, o volume.Options, u *volume.Unlocked) error {
	ho := o
	ho.Hidden = true
	ho.Hash, ho.Encryption = "", ""
	size := r.Header.Size()
	f, err := unlockHeader(ctx, r.Header, *o.ProtectHidden, ho, headerLocations(size, ho))
	if err != nil {
		if errors.Is(err, volume.ErrWrongPassword) {
			return fmt.Errorf("%w: the hidden volume to protect did not open with the credentials given for it", volume.ErrWrongPassword)
		}
		return err
	}
	hoff, hsize, _ := dataArea(f, r.Dev.Size())
	start := hoff - u.DataOffset
	if start < 0 || start+hsize > u.DataSize {
		return fmt.Errorf("%w: the hidden volume lies outside the outer volume", volume.ErrDamaged)
	}
	// Protect through the end of the outer data area: VeraCrypt also
	// refuses writes between the hidden volume and the backup headers.
	u.ProtectedOffset = start
	u.ProtectedSize = u.DataSize - start
	u.Info.Details = append(u.Info.Details, volume.Detail{Key: "Hidden volume", Value: "protected against damage from writes"})
	return nil
}
