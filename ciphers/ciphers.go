// Package ciphers is the registry of block ciphers and cipher cascades used by
// TrueCrypt, VeraCrypt and LUKS volumes.
//
// Every cipher works on many blocks per call: the per-call cost of a 16-byte
// cipher.Block interface is what makes naive sector encryption slow, so the
// sector layer hands whole runs of blocks to EncryptBlocks/DecryptBlocks.
// Each cipher lives in its own subpackage (ciphers/aes, ciphers/serpent, ...)
// and is registered here by name, so a faster implementation replaces an old
// one without touching any caller.
package ciphers

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Block is a keyed block cipher applied to many blocks per call.
//
// len(src) must be a multiple of BlockSize and len(dst) >= len(src); dst and
// src may be the same slice (in-place) but must not otherwise overlap.
// Implementations must not allocate in EncryptBlocks or DecryptBlocks.
type Block interface {
	BlockSize() int
	EncryptBlocks(dst, src []byte)
	DecryptBlocks(dst, src []byte)
}

// XTSBlock is optionally implemented by a Block that has a fused XTS kernel
// (for example AES with AES-NI/VAES), so the sector layer can avoid
// materialising tweaks in memory.
//
// tweaks holds one already-encrypted initial tweak (16 bytes, T = E_K2(i)) per
// sector; len(src) == len(tweaks)/16*sectorSize.
type XTSBlock interface {
	Block
	EncryptXTS(dst, src, tweaks []byte, sectorSize int)
	DecryptXTS(dst, src, tweaks []byte, sectorSize int)
}

// XTSPlain64Block is optionally implemented by an XTSBlock that also
// derives the initial tweaks of plain64 XTS (dm-crypt's xts-plain64,
// TrueCrypt's and VeraCrypt's XTS): sector s of src is processed with
// tweak E_k2(first+s), the sector number as a 16-byte little-endian value.
// The methods report false, doing nothing, when k2 is not a cipher of
// their own kind; the caller then derives the tweaks itself. Next to
// kernels that take half a microsecond per 4 KiB, the sector layer's own
// per-run work (tweak inputs, a scratch buffer, interface calls) costs a
// few percent, which the cipher avoids with a stack buffer and direct
// calls.
type XTSPlain64Block interface {
	XTSBlock
	EncryptXTSPlain64(dst, src []byte, k2 any, first uint64, sectorSize int) bool
	DecryptXTSPlain64(dst, src []byte, k2 any, first uint64, sectorSize int) bool
}

// Spec describes one block cipher.
type Spec struct {
	// Name is the spelling VeraCrypt prints ("AES", "Serpent", "Twofish",
	// "Camellia", "Kuznyechik", "Blowfish", "CAST5", "Triple DES").
	Name string
	// Aliases are other accepted spellings (cryptsetup's "des3_ede", ...).
	Aliases []string
	// BlockSize in bytes (16, or 8 for the legacy ciphers).
	BlockSize int
	// KeySize is the key length in bytes TrueCrypt/VeraCrypt use.
	KeySize int
	// KeySizes lists every key length in bytes New accepts.
	KeySizes []int
	// Legacy ciphers are only read from old TrueCrypt volumes.
	Legacy bool
	// New returns the cipher keyed with key.
	New func(key []byte) (Block, error)
	// Impl names the code path in use on this CPU ("aes-ni", "avx2",
	// "generic", ...), for the benchmark header; nil means "generic".
	Impl func() string
}

// Implementation names the code path the cipher uses on this CPU.
func (s Spec) Implementation() string {
	if s.Impl == nil {
		return "generic"
	}
	return s.Impl()
}

var (
	mu       sync.RWMutex
	registry = map[string]Spec{}
)

func normalize(name string) string {
	r := strings.NewReplacer(" ", "", "_", "", "-", "")
	return strings.ToLower(r.Replace(name))
}

// Register adds s under its name and aliases. A later registration of the
// same name replaces the earlier one (a faster implementation, say).
func Register(s Spec) {
	mu.Lock()
	defer mu.Unlock()
	registry[normalize(s.Name)] = s
	for _, a := range s.Aliases {
		registry[normalize(a)] = s
	}
}

// Lookup finds a cipher by name, ignoring case, spaces, dashes and
// underscores.
func Lookup(name string) (Spec, error) {
	mu.RLock()
	defer mu.RUnlock()
	s, ok := registry[normalize(name)]
	if !ok {
		return Spec{}, fmt.Errorf("unknown cipher %q", name)
	}
	return s, nil
}

// New keys the named cipher.
func New(name string, key []byte) (Block, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return s.New(key)
}

// All returns every registered cipher, sorted by name.
func All() []Spec {
	mu.RLock()
	defer mu.RUnlock()
	seen := map[string]bool{}
	var out []Spec
	for _, s := range registry {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
