package tcrypt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
	"github.com/cryptvol/cryptvol/volume"
)

// CreateOptions describe a new TrueCrypt or VeraCrypt volume.
type CreateOptions struct {
	// TrueCrypt writes the TrueCrypt 7.1a format (magic "TRUE", its KDF
	// iteration counts, no PIM) instead of VeraCrypt's.
	TrueCrypt bool
	// Encryption is the cipher or cascade (VeraCrypt name); default AES.
	Encryption string
	// Hash is the PRF ("SHA-512", "Whirlpool", ..., or "argon2id" for
	// VeraCrypt); default SHA-512.
	Hash string
	// Random, if set, is extra entropy mixed into keys and salts.
	Random io.Reader
	// Quick skips filling the data area (it stays sparse zeros).
	Quick bool
	// Progress is called while the data area is filled.
	Progress func(done, total int64)
}

// TypeName is the volume type for volume.Options: "truecrypt" or
// "veracrypt".
func (o CreateOptions) TypeName() string {
	if o.TrueCrypt {
		return "truecrypt"
	}
	return "veracrypt"
}

// Created is what creating a volume produced: the volume, open for writing
// (to format it), and the time the key derivations took.
type Created struct {
	Unlocked *volume.Unlocked
	// KDFTime is the duration of one header-key derivation.
	KDFTime time.Duration
	// FillTime is how long filling the data area took (0 with Quick).
	FillTime time.Duration
}

const (
	// hiddenReservedEnd is the gap VeraCrypt leaves between a hidden
	// volume's end and the backup header group.
	hiddenReservedEnd = 4096
	minDataSize       = 32 << 10
	veraCryptMinVer   = 0x010b
	trueCryptMinVer   = 0x0700
	headerVersion     = 5
)

// ErrTooSmall and ErrNoRoom explain refused sizes.
var (
	ErrTooSmall = errors.New("volume too small")
	ErrNoRoom   = errors.New("the hidden volume does not fit in the outer volume's free space")
)

// resolveCreate checks and defaults the options: the chain and the KDF.
func resolveCreate(o *CreateOptions, pim int) (ciphers.Chain, kdfCandidate, error) {
	if o.Encryption == "" {
		o.Encryption = "AES"
	}
	if o.Hash == "" {
		o.Hash = "SHA-512"
	}
	chain, err := ciphers.LookupChain(o.Encryption)
	if err != nil || chain.Legacy {
		return chain, kdfCandidate{}, volume.InvalidOptionf("unknown or legacy encryption %q (want one of %s)", o.Encryption, chainNames())
	}
	for _, n := range chain.Ciphers {
		if o.TrueCrypt && (n == "Camellia" || n == "Kuznyechik") {
			return chain, kdfCandidate{}, volume.InvalidOptionf("TrueCrypt volumes cannot use %s (VeraCrypt only)", n)
		}
	}
	prf := canonicalPRF(o.Hash)
	if prf == "" || prf == "SHA-1" {
		return chain, kdfCandidate{}, volume.InvalidOptionf("unknown hash %q for new volumes (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160 or argon2id)", o.Hash)
	}
	if o.TrueCrypt && pim != 0 {
		return chain, kdfCandidate{}, volume.InvalidOptionf("TrueCrypt volumes have no PIM")
	}
	if pim < 0 {
		return chain, kdfCandidate{}, fmt.Errorf("PIM must not be negative")
	}
	for _, k := range allKDFs {
		if k.PRF != prf || k.Boot || k.Legacy || k.VeraCrypt == o.TrueCrypt {
			continue
		}
		if !o.TrueCrypt {
			k = veraCryptPIMIterations(k, pim)
		}
		return chain, k, nil
	}
	return chain, kdfCandidate{}, volume.InvalidOptionf("%s is not available for %s volumes", prf, map[bool]string{true: "TrueCrypt", false: "VeraCrypt"}[o.TrueCrypt])
}

func chainNames() string {
	s := ""
	for i, c := range ciphers.Chains() {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	return s
}

// layout is where a new volume's data area goes.
type layout struct {
	hidden               bool
	dataOffset, dataSize int64
	devSize              int64
	// before, for a hidden volume, is the outer container's headers as
	// they were when the creation began: if another program rewrote one
	// since, nothing is written.
	before *volume.HeaderSnapshot
}

// Create writes a new normal volume over the whole of dev (whose size is
// the container size): both header groups, and the data area filled with
// ciphertext of throw-away keys unless Quick.
func Create(ctx context.Context, dev volume.Device, creds volume.Credentials, o CreateOptions) (*Created, error) {
	size := dev.Size()
	if size%512 != 0 {
		return nil, volume.InvalidOptionf("the size must be a multiple of 512 bytes (got %d)", size)
	}
	l := layout{dataOffset: headerGroupSize, dataSize: size - 2*headerGroupSize, devSize: size}
	if l.dataSize < minDataSize {
		return nil, fmt.Errorf("%w: a %d-byte container leaves %d bytes for data; the minimum container is %d bytes", ErrTooSmall, size, max(l.dataSize, 0), 2*headerGroupSize+minDataSize)
	}
	return create(ctx, dev, creds, o, l)
}

// HiddenSpan is where CreateHidden places a hidden volume of hiddenSize
// bytes in a container of devSize bytes, as VeraCrypt does: bytes [start,
// end) of the container, end leaving hiddenReservedEnd bytes before the
// backup header group (room for the outer filesystem's own last sectors,
// such as NTFS's backup boot sector).
func HiddenSpan(devSize, hiddenSize int64) (start, end int64) {
	end = devSize - headerGroupSize - hiddenReservedEnd
	return end - hiddenSize, end
}

// CreateHidden places a hidden volume of hiddenSize bytes at the end of the
// outer volume on dev. usedEnd is the absolute offset in dev past the
// outer filesystem's last used cluster: the hidden volume must start at or
// after it.
func CreateHidden(ctx context.Context, dev volume.Device, creds volume.Credentials, o CreateOptions, hiddenSize, usedEnd int64) (*Created, error) {
	size := dev.Size()
	if hiddenSize%512 != 0 {
		return nil, volume.InvalidOptionf("the hidden volume size must be a multiple of 512 bytes (got %d)", hiddenSize)
	}
	if hiddenSize < minDataSize {
		return nil, fmt.Errorf("%w: the hidden volume must hold at least %d bytes", ErrTooSmall, minDataSize)
	}
	start, _ := HiddenSpan(size, hiddenSize)
	if start < usedEnd || start < headerGroupSize {
		free := size - headerGroupSize - hiddenReservedEnd - max(usedEnd, headerGroupSize)
		return nil, fmt.Errorf("%w: it needs %d bytes, the outer volume has %d free bytes after its last used cluster", ErrNoRoom, hiddenSize, max(free, 0))
	}
	before, err := volume.SnapshotHeader(dev, headerCopies(size)...)
	if err != nil {
		return nil, fmt.Errorf("reading the volume headers: %w", err)
	}
	return create(ctx, dev, creds, o, layout{hidden: true, dataOffset: start, dataSize: hiddenSize, devSize: size, before: before})
}

func create(ctx context.Context, dev volume.Device, creds volume.Credentials, o CreateOptions, l layout) (*Created, error) {
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
	defer clear(pass)
	s := scheme{Chain: chain, Mode: "xts"}
	h := &header{Magic: "VERA", Version: headerVersion, MinVersion: veraCryptMinVer, SectorSize: 512}
	if o.TrueCrypt {
		h.Magic, h.MinVersion = "TRUE", trueCryptMinVer
	}
	h.VolumeSize = uint64(l.dataSize)
	h.EncStart = uint64(l.dataOffset)
	h.EncSize = uint64(l.dataSize)
	if l.hidden {
		h.HiddenSize = uint64(l.dataSize)
	}
	if err := ent.fill(h.Keys[:]); err != nil {
		return nil, err
	}
	defer clear(h.Keys[:])
	out := &Created{}

	// Header areas first (random fill, then the headers), so that a
	// container is never left with a plaintext area.
	if !l.hidden {
		for _, off := range []int64{0, l.devSize - headerGroupSize} {
			junk, err := ent.bytes(headerGroupSize)
			if err != nil {
				return nil, err
			}
			if _, err := dev.WriteAt(junk, off); err != nil {
				return nil, err
			}
		}
	}
	primary, backup := int64(offNormal), l.devSize+offBackupNormal
	if l.hidden {
		primary, backup = offHidden, l.devSize+offBackupHidden
	}
	var sealed [2][]byte
	for i := range sealed {
		start := time.Now()
		if sealed[i], err = sealHeader(ctx, h, s, k, pass, ent); err != nil {
			return nil, err
		}
		if i == 0 {
			out.KDFTime = time.Since(start)
		}
	}
	if err := l.before.Check(dev); err != nil {
		return nil, err
	}
	for i, off := range []int64{primary, backup} {
		if _, err := dev.WriteAt(sealed[i], off); err != nil {
			return nil, err
		}
	}
	mode, err := s.dataMode(h.Keys[:s.keyBytes()])
	if err != nil {
		return nil, err
	}
	if !o.Quick {
		start := time.Now()
		if err := fillDataArea(ctx, dev, chain, l, ent, o.Progress); err != nil {
			return nil, err
		}
		out.FillTime = time.Since(start)
	}
	if err := dev.Sync(); err != nil {
		return nil, err
	}
	f := &found{loc: location{Offset: primary, Hidden: l.hidden}, kdf: k, scheme: s, hdr: h}
	u, err := unlocked(f, dev)
	if err != nil {
		return nil, err
	}
	u.Mode = mode
	out.Unlocked = u
	return out, nil
}

// sealHeader derives a header key over a fresh salt and returns the
// encrypted header, ready to be written.
func sealHeader(ctx context.Context, h *header, s scheme, k kdfCandidate, pass []byte, ent *entropy) ([]byte, error) {
	raw := make([]byte, headerSize)
	if err := ent.fill(raw[:saltSize]); err != nil {
		return nil, err
	}
	key, err := deriveHeaderKey(ctx, k, pass, raw[:saltSize])
	if err != nil {
		return nil, err
	}
	defer clear(key)
	plain := h.marshal()
	defer clear(plain)
	if err := s.encryptHeader(plain, key); err != nil {
		return nil, err
	}
	copy(raw[saltSize:], plain)
	return raw, nil
}

// headerCopies are the 512-byte header copies of a container of size
// bytes: normal and hidden, primary and backup. A snapshot of them before
// a header is rewritten tells whether another program rewrote one since.
func headerCopies(size int64) []volume.Extent {
	var ext []volume.Extent
	for _, off := range []int64{offNormal, offHidden, size + offBackupNormal, size + offBackupHidden} {
		if off >= 0 {
			ext = append(ext, volume.Extent{Offset: off, Length: headerSize})
		}
	}
	return ext
}

// fillDataArea writes the data area with zeros encrypted under a
// throw-away key of the same chain, as VeraCrypt does: the result is
// indistinguishable from the ciphertext the real key will write, and no
// sector of plaintext ever reaches the disk.
func fillDataArea(ctx context.Context, dev volume.Device, chain ciphers.Chain, l layout, ent *entropy, progress func(done, total int64)) error {
	ks, err := sector.ChainKeySize(chain)
	if err != nil {
		return err
	}
	key, err := ent.bytes(ks)
	if err != nil {
		return err
	}
	m, err := sector.ChainXTS(chain, key, dataUnitSize)
	clear(key)
	if err != nil {
		return err
	}
	m = sector.Parallel(m, 0)
	buf := make([]byte, 4<<20)
	for done := int64(0); done < l.dataSize; {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(int64(len(buf)), l.dataSize-done)
		b := buf[:n]
		clear(b)
		m.Encrypt(b, b, uint64((l.dataOffset+done)/dataUnitSize))
		if _, err := dev.WriteAt(b, l.dataOffset+done); err != nil {
			return err
		}
		done += n
		if progress != nil {
			progress(done, l.dataSize)
		}
	}
	return nil
}
