package luks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"sort"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/volume"
)

// Header writes are ordered so that a crash between any two writes leaves
// a volume that opens with the old or the new passphrase: new key material
// goes to an area no header refers to yet, then the header switches to it
// in one write per copy; material that is no longer referenced is wiped
// only after the header stopped pointing at it. LUKS2 writes the primary
// copy first, then the secondary, each with the next sequence id, so a
// crash in between leaves one valid copy of each generation.

const saltSize = 32

func randomBytes(rnd io.Reader, n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(rnd, b); err != nil {
		return nil, fmt.Errorf("reading random bytes: %w", err)
	}
	return b, nil
}

func orRand(r io.Reader) io.Reader {
	if r == nil {
		return rand.Reader
	}
	return r
}

// sealKeyMaterial derives the keyslot key from the passphrase, splits the
// volume key into stripes and encrypts them (512-byte sectors from IV 0)
// with spec: what goes into the keyslot's area, padded to whole sectors.
func sealKeyMaterial(ctx context.Context, mk, pass []byte, p kdf.Params, salt []byte, spec CipherSpec, areaKeyLen, stripes int, afHash string, rnd io.Reader) ([]byte, error) {
	hs, err := lookupHash(afHash)
	if err != nil {
		return nil, err
	}
	dk, err := kdf.Derive(ctx, p, pass, salt, areaKeyLen)
	if err != nil {
		return nil, err
	}
	defer clear(dk)
	material := make([]byte, afSectors(len(mk), stripes)*512)
	if err := afSplit(material, mk, stripes, hs, rnd); err != nil {
		return nil, err
	}
	m, err := spec.NewMode(dk, 512)
	if err != nil {
		clear(material)
		return nil, err
	}
	m.Encrypt(material, material, 0)
	return material, nil
}

// wipe overwrites a no longer referenced key material area with random
// bytes.
func wipe(dev volume.Device, off, n int64, rnd io.Reader) error {
	junk, err := randomBytes(rnd, int(n))
	if err != nil {
		return err
	}
	return writeAt(dev, junk, off, false)
}

// commitLUKS2 writes meta as the next generation of both header copies.
func commitLUKS2(dev volume.Device, h *luks2Header, meta *metadata, rnd io.Reader, grow bool) error {
	text, err := meta.encode()
	if err != nil {
		return err
	}
	next := *h
	next.bin.SeqID++
	var copies [2][]byte
	for i := range copies {
		b := next.bin
		b.Secondary = i == 1
		b.Offset = 0
		if b.Secondary {
			b.Offset = b.Size
		}
		if !next.saltOK[i] {
			s, err := randomBytes(rnd, hdrSaltLen)
			if err != nil {
				return err
			}
			copy(next.salts[i][:], s)
			next.saltOK[i] = true
		}
		b.Salt = next.salts[i]
		if copies[i], err = sealCopy(&b, text); err != nil {
			return err
		}
	}
	// With both copies of the same generation on disk, a crash in this
	// commit leaves one of them whole, old or new. With one copy stale
	// (a commit a crash cut short), a torn write of the current copy
	// would leave only the stale one, a generation older than what the
	// volume's data and keyslots already reflect (a re-encryption's
	// hot-zone checksums of the chunk after, say): the stale copy is
	// written first, and flushed, before the current one is touched.
	order := []int{0, 1}
	if h.stale == 2 {
		order = []int{1, 0}
	}
	for n, i := range order {
		if err := writeAt(dev, copies[i], int64(i)*int64(next.bin.Size), grow); err != nil {
			return err
		}
		if n == 0 && h.stale != 0 {
			if err := dev.Sync(); err != nil {
				return err
			}
		}
	}
	if err := dev.Sync(); err != nil {
		return err
	}
	next.meta = meta
	next.warning, next.stale = "", 0
	*h = next
	return nil
}

// findArea returns the lowest 4096-aligned offset in the keyslots area
// where n bytes fit without overlapping an existing keyslot area.
func findArea(meta *metadata, hdrSize uint64, n uint64, except string) (uint64, error) {
	areas, err := meta.areas()
	if err != nil {
		return 0, err
	}
	var used []interval
	for id, a := range areas {
		if id != except {
			used = append(used, a)
		}
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
		return 0, fmt.Errorf("%w: no room for a %d-byte keyslot area in the %d-byte keyslots area", volume.ErrUnsupported, n, end-2*hdrSize)
	}
	return off, nil
}

// luks2AreaSize is a keyslot area's size: the split key in whole sectors,
// rounded up to 4096 bytes.
func luks2AreaSize(keyBytes, stripes int) uint64 {
	return (uint64(afSectors(keyBytes, stripes))*512 + 4095) &^ 4095
}

// newLUKS2Keyslot builds a keyslot object holding mk under pass and the
// material for its area at off.
func newLUKS2Keyslot(ctx context.Context, mk, pass []byte, p kdf.Params, spec CipherSpec, afHash string, off uint64, rnd io.Reader) (map[string]any, []byte, error) {
	salt, err := randomBytes(rnd, saltSize)
	if err != nil {
		return nil, nil, err
	}
	material, err := sealKeyMaterial(ctx, mk, pass, p, salt, spec, len(mk), luks1Stripes, afHash, rnd)
	if err != nil {
		return nil, nil, err
	}
	k := map[string]any{"salt": base64.StdEncoding.EncodeToString(salt)}
	switch p.Kind {
	case kdf.KindPBKDF2:
		k["type"], k["hash"], k["iterations"] = "pbkdf2", p.PRF, int64(p.Iterations)
	case kdf.KindArgon2i, kdf.KindArgon2id:
		k["type"] = "argon2id"
		if p.Kind == kdf.KindArgon2i {
			k["type"] = "argon2i"
		}
		k["time"], k["memory"], k["cpus"] = int64(p.Iterations), int64(p.MemoryKiB), int64(p.Parallelism)
	}
	slot := map[string]any{
		"type":     "luks2",
		"key_size": int64(len(mk)),
		"af":       map[string]any{"type": "luks1", "stripes": int64(luks1Stripes), "hash": afHash},
		"area": map[string]any{"type": "raw", "offset": fmt.Sprint(off), "size": fmt.Sprint(luks2AreaSize(len(mk), luks1Stripes)),
			"encryption": spec.String(), "key_size": int64(len(mk))},
		"kdf": k,
	}
	return slot, material, nil
}

// object returns raw[key] as a JSON object, creating it if absent.
func object(raw map[string]any, key string) map[string]any {
	if m, ok := raw[key].(map[string]any); ok {
		return m
	}
	m := map[string]any{}
	raw[key] = m
	return m
}

// stringList reads a JSON array of strings from the generic tree.
func stringList(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func toAny(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// deepCopy clones a generic JSON tree, so edits never touch a header that
// is still in use.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

// editLUKS2 applies fn to a copy of the metadata tree and validates the
// result.
func editLUKS2(h *luks2Header, fn func(raw map[string]any)) (*metadata, error) {
	raw := deepCopy(h.meta.raw).(map[string]any)
	fn(raw)
	m := &metadata{raw: raw}
	return m.reparse(h.size())
}

// unassignKeyslot removes keyslot id from the tree: the keyslot, its
// references in digests and tokens, and digests left with neither
// keyslots nor segments (as cryptsetup erases unused digests).
func unassignKeyslot(raw map[string]any, id string) {
	delete(object(raw, "keyslots"), id)
	for _, section := range []string{"digests", "tokens"} {
		for did, v := range object(raw, section) {
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			var keep []string
			for _, k := range stringList(obj["keyslots"]) {
				if k != id {
					keep = append(keep, k)
				}
			}
			obj["keyslots"] = toAny(keep)
			if section == "digests" && len(keep) == 0 && len(stringList(obj["segments"])) == 0 {
				delete(object(raw, "digests"), did)
			}
		}
	}
}

// assignKeyslot adds keyslot id to digest dg.
func assignKeyslot(raw map[string]any, dg, id string) {
	obj, ok := object(raw, "digests")[dg].(map[string]any)
	if !ok {
		return
	}
	list := stringList(obj["keyslots"])
	if !contains(list, id) {
		list = append(list, id)
	}
	obj["keyslots"] = toAny(list)
}

// writeLUKS1Header writes the 592-byte header in one write.
func writeLUKS1Header(dev volume.Device, h *luks1Header) error {
	if err := writeAt(dev, h.marshal(), 0, false); err != nil {
		return err
	}
	return dev.Sync()
}

// sealLUKS1Slot fills keyslot i of h (in memory) for mk under pass and
// returns the key material to write at its offset.
func sealLUKS1Slot(ctx context.Context, h *luks1Header, i int, mk, pass []byte, iterations int, rnd io.Reader) ([]byte, error) {
	salt, err := randomBytes(rnd, saltSize)
	if err != nil {
		return nil, err
	}
	p := kdf.Params{Kind: kdf.KindPBKDF2, PRF: h.HashSpec, Iterations: uint32(iterations)}
	material, err := sealKeyMaterial(ctx, mk, pass, p, salt, h.spec, len(mk), luks1Stripes, h.HashSpec, rnd)
	if err != nil {
		return nil, err
	}
	s := &h.Slots[i]
	s.Active = luks1SlotEnabled
	s.Iterations = uint32(iterations)
	copy(s.Salt[:], salt)
	s.Stripes = luks1Stripes
	return material, nil
}
