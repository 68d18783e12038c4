package luks

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/cryptvol/cryptvol/volume"
)

// LUKS2 JSON metadata (specification section 3). Numbers that may exceed
// 2^53 are decimal strings; object keys of keyslots, tokens, segments and
// digests are decimal ids.

type jsonDoc struct {
	Keyslots map[string]jsonKeyslot `json:"keyslots"`
	Tokens   map[string]jsonToken   `json:"tokens"`
	Segments map[string]jsonSegment `json:"segments"`
	Digests  map[string]jsonDigest  `json:"digests"`
	Config   *jsonConfig            `json:"config"`
}

type jsonKeyslot struct {
	Type    string `json:"type"`
	KeySize *int64 `json:"key_size"`
	// Mode and Direction belong to a "reencrypt" keyslot.
	Mode      string    `json:"mode"`
	Direction string    `json:"direction"`
	AF        *jsonAF   `json:"af"`
	Area      *jsonArea `json:"area"`
	KDF       *jsonKDF  `json:"kdf"`
	Priority  *int64    `json:"priority"`
}

type jsonAF struct {
	Type    string `json:"type"`
	Stripes int64  `json:"stripes"`
	Hash    string `json:"hash"`
}

type jsonArea struct {
	Type       string `json:"type"`
	Offset     string `json:"offset"`
	Size       string `json:"size"`
	Encryption string `json:"encryption"`
	KeySize    int64  `json:"key_size"`
	// A "reencrypt" keyslot's area: the checksum hash and block, the
	// data shift.
	Hash       string `json:"hash"`
	SectorSize int64  `json:"sector_size"`
	ShiftSize  string `json:"shift_size"`
}

type jsonKDF struct {
	Type       string `json:"type"`
	Hash       string `json:"hash"`
	Iterations int64  `json:"iterations"`
	Time       int64  `json:"time"`
	Memory     int64  `json:"memory"`
	CPUs       int64  `json:"cpus"`
	Salt       string `json:"salt"`
}

type jsonToken struct {
	Type     string   `json:"type"`
	Keyslots []string `json:"keyslots"`
}

type jsonSegment struct {
	Type       string          `json:"type"`
	Offset     string          `json:"offset"`
	Size       string          `json:"size"`
	IVTweak    string          `json:"iv_tweak"`
	Encryption string          `json:"encryption"`
	SectorSize int64           `json:"sector_size"`
	Integrity  json.RawMessage `json:"integrity"`
	Flags      []string        `json:"flags"`
}

type jsonDigest struct {
	Type       string   `json:"type"`
	Keyslots   []string `json:"keyslots"`
	Segments   []string `json:"segments"`
	Hash       string   `json:"hash"`
	Iterations int64    `json:"iterations"`
	Salt       string   `json:"salt"`
	Digest     string   `json:"digest"`
}

type jsonConfig struct {
	JSONSize     string            `json:"json_size"`
	KeyslotsSize string            `json:"keyslots_size"`
	Flags        []string          `json:"flags"`
	Requirements *jsonRequirements `json:"requirements"`
}

type jsonRequirements struct {
	Mandatory []string `json:"mandatory"`
}

// metadata is the JSON area: a generic tree kept for rewriting (tokens and
// fields cryptvol does not know survive a keyslot change untouched) and a
// typed view of the parts it uses.
type metadata struct {
	raw map[string]any
	doc jsonDoc
}

func damaged(format string, a ...any) error {
	return fmt.Errorf("%w: LUKS2 metadata: %s", volume.ErrDamaged, fmt.Sprintf(format, a...))
}

// parseJSONArea parses the JSON area of a header copy of hdrSize bytes the
// way cryptsetup does: it must start with '{', and everything after the
// JSON text must be NUL bytes.
func parseJSONArea(area []byte, hdrSize uint64) (*metadata, error) {
	if len(area) == 0 || area[0] != '{' {
		return nil, damaged("the JSON area does not start with '{'")
	}
	dec := json.NewDecoder(bytes.NewReader(area))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, damaged("invalid JSON: %v", err)
	}
	end := dec.InputOffset()
	if end >= int64(len(area)) {
		return nil, damaged("no NUL byte after the JSON text")
	}
	for _, c := range area[end:] {
		if c != 0 {
			return nil, damaged("stray byte 0x%02x after the JSON text", c)
		}
	}
	return newMetadata(raw, area[:end], hdrSize)
}

// newMetadata builds the typed view of raw (whose encoding is text) and
// validates it.
func newMetadata(raw map[string]any, text []byte, hdrSize uint64) (*metadata, error) {
	m := &metadata{raw: raw}
	if err := json.Unmarshal(text, &m.doc); err != nil {
		return nil, damaged("%v", err)
	}
	if err := m.validate(hdrSize); err != nil {
		return nil, err
	}
	return m, nil
}

// encode renders the metadata compactly, as cryptsetup writes it.
func (m *metadata) encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m.raw); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// reparse re-validates the generic tree after an edit.
func (m *metadata) reparse(hdrSize uint64) (*metadata, error) {
	text, err := m.encode()
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	return newMetadata(raw, text, hdrSize)
}

// isID reports whether s is a decimal id ("0", "12").
func isID(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseU64 parses a decimal string number.
func parseU64(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// sortedIDs returns the ids of an id-keyed object in numeric order.
func sortedIDs[T any](m map[string]T) []string {
	ids := make([]string, 0, len(m))
	for k := range m {
		ids = append(ids, k)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, _ := strconv.Atoi(ids[i])
		b, _ := strconv.Atoi(ids[j])
		return a < b
	})
	return ids
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func decodeB64(s string) ([]byte, bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil
}

// validate applies the LUKS2 consistency rules cryptsetup enforces on load.
func (m *metadata) validate(hdrSize uint64) error {
	d := &m.doc
	if d.Keyslots == nil || d.Tokens == nil || d.Segments == nil || d.Digests == nil || d.Config == nil {
		return damaged("a top-level section (keyslots, tokens, segments, digests or config) is missing")
	}
	for id, t := range d.Tokens {
		if !isID(id) || t.Type == "" || t.Keyslots == nil {
			return damaged("token %q is malformed", id)
		}
		for _, k := range t.Keyslots {
			if _, ok := d.Keyslots[k]; !ok {
				return damaged("token %s refers to missing keyslot %q", id, k)
			}
		}
	}
	for id, dg := range d.Digests {
		if !isID(id) || dg.Type == "" || dg.Keyslots == nil || dg.Segments == nil {
			return damaged("digest %q is malformed", id)
		}
		for _, k := range dg.Keyslots {
			if _, ok := d.Keyslots[k]; !ok {
				return damaged("digest %s refers to missing keyslot %q", id, k)
			}
		}
		for _, s := range dg.Segments {
			if _, ok := d.Segments[s]; !ok {
				return damaged("digest %s refers to missing segment %q", id, s)
			}
		}
	}
	if len(d.Segments) == 0 {
		return damaged("no segments")
	}
	for id, s := range d.Segments {
		if err := m.validateSegment(id, s); err != nil {
			return err
		}
	}
	for id, k := range d.Keyslots {
		if !isID(id) || k.Type == "" || k.KeySize == nil || *k.KeySize < 0 || *k.KeySize > 1<<32-1 {
			return damaged("keyslot %q is malformed", id)
		}
		if k.Type == "luks2" {
			if err := validateLUKS2Keyslot(id, k); err != nil {
				return err
			}
		}
	}
	if err := m.validateConfig(hdrSize); err != nil {
		return err
	}
	return m.validateAreas(hdrSize)
}

func (m *metadata) validateSegment(id string, s jsonSegment) error {
	if !isID(id) || s.Type == "" {
		return damaged("segment %q is malformed", id)
	}
	off, ok := parseU64(s.Offset)
	if !ok || off%512 != 0 {
		return damaged("segment %s has a bad offset %q", id, s.Offset)
	}
	var size uint64
	if s.Size != "dynamic" {
		if size, ok = parseU64(s.Size); !ok || size == 0 || size%512 != 0 {
			return damaged("segment %s has a bad size %q", id, s.Size)
		}
	}
	if s.Type != "crypt" {
		return nil
	}
	if s.Encryption == "" || s.SectorSize <= 0 || s.SectorSize > 1<<32-1 || s.SectorSize%512 != 0 {
		return damaged("crypt segment %s is malformed", id)
	}
	if _, ok := parseU64(s.IVTweak); !ok {
		return damaged("segment %s has a bad iv_tweak %q", id, s.IVTweak)
	}
	if size%uint64(s.SectorSize) != 0 {
		return damaged("segment %s size is not a multiple of its sector size", id)
	}
	for _, dg := range m.doc.Digests {
		if contains(dg.Segments, id) {
			return nil
		}
	}
	return damaged("crypt segment %s has no digest", id)
}

func validateLUKS2Keyslot(id string, k jsonKeyslot) error {
	if k.KDF == nil || k.AF == nil || k.Area == nil {
		return damaged("keyslot %s lacks kdf, af or area", id)
	}
	if *k.KeySize < 1 {
		return damaged("keyslot %s has an empty key", id)
	}
	if _, ok := decodeB64(k.KDF.Salt); !ok || k.KDF.Salt == "" {
		return damaged("keyslot %s has a bad KDF salt", id)
	}
	switch k.KDF.Type {
	case "pbkdf2":
		if k.KDF.Hash == "" || k.KDF.Iterations < 1 || k.KDF.Iterations > 1<<32-1 {
			return damaged("keyslot %s has bad PBKDF2 parameters", id)
		}
	default:
		if k.KDF.Time < 1 || k.KDF.Time > 1<<32-1 || k.KDF.Memory < 1 || k.KDF.Memory > 1<<32-1 ||
			k.KDF.CPUs < 1 || k.KDF.CPUs > 1<<32-1 {
			return damaged("keyslot %s has bad %s parameters", id, k.KDF.Type)
		}
	}
	if k.AF.Type != "luks1" || k.AF.Stripes < 1 || k.AF.Stripes > 1<<32-1 || k.AF.Hash == "" {
		return damaged("keyslot %s has a bad anti-forensic splitter", id)
	}
	if k.Area.Type != "raw" || k.Area.Encryption == "" || k.Area.KeySize < 1 || k.Area.KeySize > 1<<32-1 {
		return damaged("keyslot %s has a bad area", id)
	}
	return nil
}

func (m *metadata) validateConfig(hdrSize uint64) error {
	c := m.doc.Config
	js, ok := parseU64(c.JSONSize)
	if !ok || js != hdrSize-binHeaderSize {
		return damaged("config json_size %q does not match the %d-byte header", c.JSONSize, hdrSize)
	}
	ks, ok := parseU64(c.KeyslotsSize)
	if !ok || ks%4096 != 0 || ks > maxKeyslotsSize {
		return damaged("config keyslots_size %q is invalid", c.KeyslotsSize)
	}
	// The keyslots area must fit between the two header copies and the
	// first data segment (a detached header's segment may start at 0).
	first := uint64(0)
	for _, s := range m.doc.Segments {
		if s.Type != "crypt" {
			continue
		}
		off, _ := parseU64(s.Offset)
		if off == 0 {
			first = 0
			break
		}
		if first == 0 || off < first {
			first = off
		}
	}
	if first != 0 && (first < ks || first-ks < 2*hdrSize) {
		return damaged("keyslots area of %d bytes does not fit before the data at %d", ks, first)
	}
	return nil
}

// keyslotsEnd is the end of the keyslots area: both header copies, then
// keyslots_size bytes.
func (m *metadata) keyslotsEnd(hdrSize uint64) uint64 {
	ks, _ := parseU64(m.doc.Config.KeyslotsSize)
	return 2*hdrSize + ks
}

type interval struct{ off, len uint64 }

// areas lists every keyslot's area (id → interval).
func (m *metadata) areas() (map[string]interval, error) {
	out := map[string]interval{}
	for id, k := range m.doc.Keyslots {
		if k.Area == nil {
			return nil, damaged("keyslot %s has no area", id)
		}
		off, ok1 := parseU64(k.Area.Offset)
		n, ok2 := parseU64(k.Area.Size)
		if !ok1 || !ok2 {
			return nil, damaged("keyslot %s area has a bad offset or size", id)
		}
		out[id] = interval{off, n}
	}
	return out, nil
}

func (m *metadata) validateAreas(hdrSize uint64) error {
	ivs, err := m.areas()
	if err != nil {
		return err
	}
	end := m.keyslotsEnd(hdrSize)
	for id, a := range ivs {
		if a.off < 2*hdrSize || a.len == 0 || a.off+a.len < a.off || a.off+a.len > end {
			return damaged("keyslot %s area [%d, +%d) lies outside the keyslots area", id, a.off, a.len)
		}
		for id2, b := range ivs {
			if id != id2 && a.off >= b.off && a.off < b.off+b.len {
				return damaged("keyslot areas %s and %s overlap", id, id2)
			}
		}
	}
	for id, k := range m.doc.Keyslots {
		if k.Type != "luks2" {
			continue
		}
		need := afSectors(int(*k.KeySize), int(k.AF.Stripes)) * 512
		if *k.KeySize > 1<<16 || k.AF.Stripes > 1<<20 || uint64(need) > ivs[id].len {
			return damaged("keyslot %s: %d-byte key in %d stripes does not fit its %d-byte area",
				id, *k.KeySize, k.AF.Stripes, ivs[id].len)
		}
	}
	return nil
}

// requirements lists the mandatory requirement flags.
func (m *metadata) requirements() []string {
	if r := m.doc.Config.Requirements; r != nil {
		return r.Mandatory
	}
	return nil
}

// digestOf returns the id of the digest that covers keyslot id.
func (m *metadata) digestOf(keyslot string) (string, bool) {
	for _, id := range sortedIDs(m.doc.Digests) {
		if contains(m.doc.Digests[id].Keyslots, keyslot) {
			return id, true
		}
	}
	return "", false
}

// segmentDigest returns the digest that verifies the volume key of segment id.
func (m *metadata) segmentDigest(segment string) (string, bool) {
	for _, id := range sortedIDs(m.doc.Digests) {
		if contains(m.doc.Digests[id].Segments, segment) {
			return id, true
		}
	}
	return "", false
}
