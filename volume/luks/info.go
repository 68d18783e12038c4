package luks

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/volume"
)

// KeyslotInfo describes one keyslot, as `cryptvol keyslot list` and
// luksDump show it. No passphrase is needed to read it.
type KeyslotInfo struct {
	Slot   int    `json:"slot"`
	Active bool   `json:"active"`
	Type   string `json:"type"` // "luks1" for LUKS1 keyslots, "luks2", "reencrypt", ...
	// KDF is "pbkdf2", "argon2i" or "argon2id"; Hash is PBKDF2's hash.
	KDF        string `json:"kdf,omitempty"`
	Hash       string `json:"hash,omitempty"`
	Iterations int    `json:"iterations,omitempty"` // PBKDF2 iterations or Argon2 time cost
	MemoryKiB  int    `json:"memory_kib,omitempty"`
	Threads    int    `json:"threads,omitempty"`
	KeySize    int    `json:"key_size,omitempty"` // bits of the key it holds
	Cipher     string `json:"cipher,omitempty"`   // cipher of the key material
	Stripes    int    `json:"stripes,omitempty"`
	AFHash     string `json:"af_hash,omitempty"`
	AreaOffset int64  `json:"area_offset"`
	AreaSize   int64  `json:"area_size"`
	Priority   string `json:"priority,omitempty"` // LUKS2: ignore, normal, prefer
	Digest     string `json:"digest,omitempty"`
	// Unbound is set for a LUKS2 keyslot whose key is not the data
	// segment's volume key.
	Unbound bool `json:"unbound,omitempty"`
}

// Header is what a LUKS header says without any passphrase.
type Header struct {
	Version      int             `json:"version"`
	UUID         string          `json:"uuid"`
	Label        string          `json:"label,omitempty"`
	Subsystem    string          `json:"subsystem,omitempty"`
	Cipher       string          `json:"cipher"`
	KeySize      int             `json:"key_size"` // bits
	SectorSize   int             `json:"sector_size"`
	DataOffset   int64           `json:"data_offset"`
	HeaderSize   int64           `json:"header_size"` // header and keyslot areas, bytes
	SeqID        uint64          `json:"epoch,omitempty"`
	Requirements []string        `json:"requirements,omitempty"`
	Keyslots     []KeyslotInfo   `json:"keyslots"`
	Details      []volume.Detail `json:"details,omitempty"`
	Warning      string          `json:"warning,omitempty"`
	// JSON is the LUKS2 metadata as stored (nil for LUKS1), for --json dumps.
	JSON map[string]any `json:"metadata,omitempty"`
}

// Inspect reads the LUKS header on hdr (a volume or a detached header)
// without unlocking it, like cryptsetup luksDump.
func Inspect(hdr volume.Device) (*Header, error) {
	l, err := load(hdr, "luks")
	if err != nil {
		return nil, err
	}
	if l.v1 != nil {
		h := l.v1
		out := &Header{Version: 1, UUID: h.UUID, Cipher: h.CipherName + "-" + h.CipherMode,
			KeySize: int(h.KeyBytes) * 8, SectorSize: 512, DataOffset: int64(h.PayloadOff) * 512,
			HeaderSize: h.areaEnd(), Keyslots: luks1Keyslots(h)}
		out.Details = luks1Details(h)
		return out, nil
	}
	h := l.v2
	out := &Header{Version: 2, UUID: h.bin.UUID, Label: h.bin.Label, Subsystem: h.bin.Subsystem,
		HeaderSize: h.areaEnd(), SeqID: h.bin.SeqID, Requirements: h.meta.requirements(),
		Keyslots: luks2Keyslots(h), Warning: h.warning, JSON: h.meta.raw}
	if ids := sortedIDs(h.meta.doc.Segments); len(ids) > 0 {
		s := h.meta.doc.Segments[ids[0]]
		out.Cipher = s.Encryption
		out.SectorSize = int(s.SectorSize)
		off, _ := parseU64(s.Offset)
		out.DataOffset = int64(off)
		if dg, ok := h.meta.segmentDigest(ids[0]); ok {
			out.KeySize = h.volumeKeySize(dg) * 8
		}
	}
	out.Details = luks2Details(h)
	return out, nil
}

func luks1Keyslots(h *luks1Header) []KeyslotInfo {
	var out []KeyslotInfo
	for i, s := range h.Slots {
		off, n := h.slotMaterial(i)
		ki := KeyslotInfo{Slot: i, Active: s.Active == luks1SlotEnabled, Type: "luks1",
			KeySize: int(h.KeyBytes) * 8, Cipher: h.CipherName + "-" + h.CipherMode,
			Stripes: int(s.Stripes), AFHash: h.HashSpec, AreaOffset: off, AreaSize: n}
		if ki.Active {
			ki.KDF, ki.Hash, ki.Iterations = "pbkdf2", h.HashSpec, int(s.Iterations)
		}
		out = append(out, ki)
	}
	return out
}

func luks2Keyslots(h *luks2Header) []KeyslotInfo {
	var out []KeyslotInfo
	var segDigest string
	if ids := sortedIDs(h.meta.doc.Segments); len(ids) == 1 {
		segDigest, _ = h.meta.segmentDigest(ids[0])
	}
	areas, _ := h.meta.areas()
	for _, id := range sortedIDs(h.meta.doc.Keyslots) {
		k := h.meta.doc.Keyslots[id]
		ki := KeyslotInfo{Slot: atoiID(id), Active: true, Type: k.Type, KeySize: int(*k.KeySize) * 8,
			AreaOffset: int64(areas[id].off), AreaSize: int64(areas[id].len)}
		if k.KDF != nil {
			ki.KDF = k.KDF.Type
			if k.KDF.Type == "pbkdf2" {
				ki.Hash, ki.Iterations = k.KDF.Hash, int(k.KDF.Iterations)
			} else {
				ki.Iterations, ki.MemoryKiB, ki.Threads = int(k.KDF.Time), int(k.KDF.Memory), int(k.KDF.CPUs)
			}
		}
		if k.Area != nil {
			ki.Cipher = k.Area.Encryption
		}
		if k.AF != nil {
			ki.Stripes, ki.AFHash = int(k.AF.Stripes), k.AF.Hash
		}
		ki.Priority = [...]string{"ignore", "normal", "prefer"}[min(max(keyslotPriority(k), 0), 2)]
		ki.Digest, _ = h.meta.digestOf(id)
		ki.Unbound = ki.Digest == "" || (segDigest != "" && ki.Digest != segDigest)
		out = append(out, ki)
	}
	return out
}

// slotKDF is the KDF of the keyslot that opened a volume.
type slotKDF struct {
	name       string
	iterations int
	memoryKiB  int
	threads    int
}

func kdfOfLUKS1(h *luks1Header, slot int) slotKDF {
	return slotKDF{name: "pbkdf2-" + h.HashSpec, iterations: int(h.Slots[slot].Iterations)}
}

func kdfOfLUKS2(h *luks2Header, id string) slotKDF {
	k := h.meta.doc.Keyslots[id].KDF
	if k.Type == "pbkdf2" {
		return slotKDF{name: "pbkdf2-" + k.Hash, iterations: int(k.Iterations)}
	}
	return slotKDF{name: k.Type, iterations: int(k.Time), memoryKiB: int(k.Memory), threads: int(k.CPUs)}
}

func fillSlotKDF(in *volume.Info, k slotKDF) {
	in.Hash = k.name
	in.Iterations = k.iterations
	in.MemoryKiB = k.memoryKiB
	in.Parallelism = k.threads
}

func luks1Info(h *luks1Header) volume.Info {
	return volume.Info{
		Format:     "luks1",
		Version:    1,
		Encryption: h.spec.String(),
		Mode:       h.spec.Mode(),
		KeySize:    int(h.KeyBytes) * 8,
		SectorSize: 512,
		UUID:       h.UUID,
		Details:    luks1Details(h),
	}
}

func luks2Info(h *luks2Header, seg *segment, keyBytes int) volume.Info {
	return volume.Info{
		Format:     "luks2",
		Version:    2,
		Encryption: seg.Spec.String(),
		Mode:       seg.Spec.Mode(),
		KeySize:    keyBytes * 8,
		SectorSize: seg.SectorSize,
		UUID:       h.bin.UUID,
		Label:      h.bin.Label,
		Details:    luks2Details(h),
	}
}

func hexSpaced(b []byte) string {
	var s strings.Builder
	for i, c := range b {
		if i > 0 {
			s.WriteByte(' ')
		}
		s.WriteString(hex.EncodeToString([]byte{c}))
	}
	return s.String()
}

// luks1Details is the luksDump listing of a LUKS1 header.
func luks1Details(h *luks1Header) []volume.Detail {
	d := []volume.Detail{
		{Key: "Cipher name", Value: h.CipherName},
		{Key: "Cipher mode", Value: h.CipherMode},
		{Key: "Hash spec", Value: h.HashSpec},
		{Key: "Payload offset", Value: fmt.Sprintf("%d sectors", h.PayloadOff)},
		{Key: "MK bits", Value: fmt.Sprint(h.KeyBytes * 8)},
		{Key: "MK digest", Value: hexSpaced(h.MKDigest[:])},
		{Key: "MK salt", Value: hexSpaced(h.MKDigestSalt[:])},
		{Key: "MK iterations", Value: fmt.Sprint(h.MKDigestIter)},
	}
	for i, s := range h.Slots {
		v := "DISABLED"
		switch s.Active {
		case luks1SlotEnabled:
			v = fmt.Sprintf("ENABLED, %d iterations, salt %s, key material offset %d, %d AF stripes",
				s.Iterations, hex.EncodeToString(s.Salt[:]), s.Offset, s.Stripes)
		case luks1SlotDisabled:
		default:
			v = fmt.Sprintf("INVALID (active mark 0x%08x)", s.Active)
		}
		d = append(d, volume.Detail{Key: fmt.Sprintf("Key Slot %d", i), Value: v})
	}
	return d
}

// luks2Details is the luksDump listing of a LUKS2 header.
func luks2Details(h *luks2Header) []volume.Detail {
	doc := &h.meta.doc
	ks, _ := parseU64(doc.Config.KeyslotsSize)
	sub := h.bin.Subsystem
	if sub == "" {
		sub = "(no subsystem)"
	}
	flags := "(no flags)"
	if len(doc.Config.Flags) > 0 {
		flags = strings.Join(doc.Config.Flags, " ")
	}
	d := []volume.Detail{
		{Key: "Epoch", Value: fmt.Sprint(h.bin.SeqID)},
		{Key: "Metadata area", Value: fmt.Sprintf("%d [bytes]", h.size())},
		{Key: "Keyslots area", Value: fmt.Sprintf("%d [bytes]", ks)},
		{Key: "Subsystem", Value: sub},
		{Key: "Flags", Value: flags},
	}
	if r := h.meta.requirements(); len(r) > 0 {
		d = append(d, volume.Detail{Key: "Requirements", Value: strings.Join(r, " ")})
	}
	for _, id := range sortedIDs(doc.Segments) {
		s := doc.Segments[id]
		length := "(whole device)"
		if s.Size != "dynamic" {
			length = s.Size + " [bytes]"
		}
		d = append(d, volume.Detail{Key: "Segment " + id, Value: fmt.Sprintf("%s, offset %s [bytes], length %s, cipher %s, sector %d [bytes], IV tweak %s",
			s.Type, s.Offset, length, s.Encryption, s.SectorSize, s.IVTweak)})
	}
	for _, k := range luks2Keyslots(h) {
		v := fmt.Sprintf("%s, key %d bits, priority %s", k.Type, k.KeySize, k.Priority)
		if k.Cipher != "" {
			v += ", cipher " + k.Cipher
		}
		switch {
		case k.KDF == "pbkdf2":
			v += fmt.Sprintf(", PBKDF pbkdf2-%s, %d iterations", k.Hash, k.Iterations)
		case k.KDF != "":
			v += fmt.Sprintf(", PBKDF %s, time cost %d, memory %d KiB, threads %d", k.KDF, k.Iterations, k.MemoryKiB, k.Threads)
		}
		if k.Stripes > 0 {
			v += fmt.Sprintf(", AF stripes %d (%s)", k.Stripes, k.AFHash)
		}
		v += fmt.Sprintf(", area %d+%d", k.AreaOffset, k.AreaSize)
		if k.Digest != "" {
			v += ", digest " + k.Digest
		}
		if k.Unbound {
			v += ", unbound"
		}
		d = append(d, volume.Detail{Key: fmt.Sprintf("Keyslot %d", k.Slot), Value: v})
	}
	for _, id := range sortedIDs(doc.Tokens) {
		t := doc.Tokens[id]
		d = append(d, volume.Detail{Key: "Token " + id, Value: fmt.Sprintf("%s, keyslots [%s]", t.Type, strings.Join(t.Keyslots, " "))})
	}
	for _, id := range sortedIDs(doc.Digests) {
		g := doc.Digests[id]
		d = append(d, volume.Detail{Key: "Digest " + id, Value: fmt.Sprintf("%s, hash %s, %d iterations, keyslots [%s], segments [%s]",
			g.Type, g.Hash, g.Iterations, strings.Join(g.Keyslots, " "), strings.Join(g.Segments, " "))})
	}
	return d
}
