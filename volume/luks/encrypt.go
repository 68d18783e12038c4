package luks

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/volume"
)

// EncryptOptions describe turning a plain image into a LUKS2 volume in
// place (cryptsetup reencrypt --encrypt).
type EncryptOptions struct {
	// Cipher, KeySize, SectorSize and KDF are as for Create.
	Cipher     string
	KeySize    int
	SectorSize int
	KDF        KDFOptions
	// Header is a detached header device, a new empty file: the data is
	// encrypted where it is.
	Header volume.Device
	// DataOffset is, without a detached header, how far the data moves up
	// to make room for the header (default 16 MiB, LUKS2's).
	DataOffset int64
	// Resilience is checksum (default) or journal, for a detached header.
	Resilience volume.Resilience
	Rand       io.Reader
}

// EncryptKeeps is how many bytes of a size-byte image StartEncrypt keeps
// as data: all of them with a detached header; else the image less twice
// the data offset (the header at the start, and the room the move needs).
func EncryptKeeps(size int64, o EncryptOptions) int64 {
	if o.Header != nil {
		return size
	}
	off := o.DataOffset
	if off == 0 {
		off = 16 << 20
	}
	return size - 2*off
}

// StartEncrypt begins encrypting the plain image on dev as a LUKS2 volume
// whose passphrase the credentials stand for. With a detached header
// (o.Header) the header is made there, recording an "encrypt"
// re-encryption (cryptsetup's metadata: the data is a "linear" segment
// until it is encrypted, chunk by chunk, from its start); the caller keeps
// the header file under a temporary name until this returns. Without one,
// the data would move up to make room for the header at the start, which
// is not implemented: cryptsetup's layout for it (the first segment moved
// to the end) is left to cryptsetup.
func StartEncrypt(ctx context.Context, dev volume.Device, creds volume.Credentials, o EncryptOptions) (*Reencryption, error) {
	if o.Header == nil {
		return nil, fmt.Errorf("%w: encrypting a LUKS2 volume in place needs a detached header (--header FILE); a VeraCrypt volume needs only 256 KiB free at the image's end", volume.ErrUnsupported)
	}
	if o.Resilience == "" {
		o.Resilience = volume.ResilienceChecksum
	}
	if o.Resilience != volume.ResilienceChecksum && o.Resilience != volume.ResilienceJournal {
		return nil, volume.InvalidOptionf("unknown resilience %q (want checksum or journal)", o.Resilience)
	}
	if o.Header.Size() != 0 {
		return nil, fmt.Errorf("the detached header file must be new and empty (it has %d bytes)", o.Header.Size())
	}
	rnd := orRand(o.Rand)
	// A header for a volume whose data is encrypted from offset 0; then
	// the same header turned into one that records the encryption, before
	// the file can be found under its name.
	cr, err := Create(ctx, dev, CreateOptions{
		Type: "luks2", Cipher: o.Cipher, KeySize: o.KeySize, SectorSize: o.SectorSize, KDF: o.KDF,
		Header: o.Header, Quick: true, Rand: rnd,
	}, creds)
	if err != nil {
		return nil, err
	}
	newKey := cr.Unlocked.MasterKey
	// The header file grew as Create wrote it.
	hdr := &growingDevice{Device: o.Header, size: cr.Header.HeaderSize}
	l, err := load(hdr, "luks2")
	if err != nil {
		clear(newKey)
		return nil, err
	}
	h := l.v2
	seg, err := h.dataSegment()
	if err != nil {
		clear(newKey)
		return nil, err
	}
	size := dev.Size() - seg.Offset
	size -= size % int64(seg.SectorSize)
	if size <= 0 {
		clear(newKey)
		return nil, errors.New("the image is empty")
	}
	reencArea, err := largestGap(h.meta, h.size())
	if err != nil {
		clear(newKey)
		return nil, err
	}
	reencID := freeID(h.meta.doc.Keyslots, "")
	area := map[string]any{"type": string(o.Resilience), "offset": fmt.Sprint(reencArea.off), "size": fmt.Sprint(reencArea.len)}
	if o.Resilience == volume.ResilienceChecksum {
		area["hash"], area["sector_size"] = "sha256", int64(seg.SectorSize)
	}
	dgID := seg.Digest
	reencDigestID := freeID(h.meta.doc.Digests, "")
	digestIter := h.meta.doc.Digests[dgID].Iterations
	meta, err := editLUKS2(h, func(raw map[string]any) {
		segs := map[string]any{
			"0": segmentObject("linear", seg.Offset, "dynamic", 0, "", 0, ""),
			"1": segmentObject("linear", seg.Offset, "dynamic", 0, "", 0, "backup-previous"),
			"2": segmentObject("crypt", seg.Offset, "dynamic", seg.IVTweak, seg.Spec.String(), seg.SectorSize, "backup-final"),
		}
		raw["segments"] = segs
		object(raw, "keyslots")[reencID] = map[string]any{"type": "reencrypt", "key_size": int64(1), "mode": "encrypt",
			"direction": "forward", "priority": int64(0), "area": area}
		dg := object(raw, "digests")
		dg[dgID].(map[string]any)["segments"] = []any{"2"}
		dg[reencDigestID] = map[string]any{"type": "pbkdf2", "keyslots": []any{reencID}, "segments": []any{}, "hash": "sha256",
			"iterations": digestIter, "salt": "", "digest": ""}
		setRequirement(raw, true)
	})
	if err != nil {
		clear(newKey)
		return nil, fmt.Errorf("internal error editing LUKS2 metadata: %w", err)
	}
	vd, err := verificationData(meta, nil, newKey, reencryptVersion)
	if err != nil {
		clear(newKey)
		return nil, err
	}
	rd, err := digestObject(vd, "sha256", digestIter, rnd)
	clear(vd)
	if err != nil {
		clear(newKey)
		return nil, err
	}
	if meta, err = meta.editDigest(h.size(), reencDigestID, rd); err != nil {
		clear(newKey)
		return nil, err
	}
	if err := commitLUKS2(hdr, h, meta, rnd, false); err != nil {
		clear(newKey)
		return nil, err
	}
	r := &Reencryption{dev: dev, hdr: hdr, h: h, rnd: rnd, newKey: newKey}
	if err := r.load(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}
