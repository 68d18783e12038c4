package lanes

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/cryptvol/cryptvol/hashes/ripemd160"
)

// Hash selects the hash function of the chains.
type Hash int

const (
	SHA256 Hash = iota
	SHA512
	RIPEMD160
	BLAKE2s256
	numHashes
)

var hashInfo = [numHashes]struct {
	name             string
	size, block      int
	wordBytes, words int
	littleEndian     bool
}{
	SHA256:     {"SHA-256", 32, 64, 4, 8, false},
	SHA512:     {"SHA-512", 64, 128, 8, 8, false},
	RIPEMD160:  {"RIPEMD-160", 20, 64, 4, 5, true},
	BLAKE2s256: {"BLAKE2s-256", 32, 64, 4, 8, true},
}

func (h Hash) String() string { return hashInfo[h].name }

// Size is the digest length (the PBKDF2 block length) in bytes.
func (h Hash) Size() int { return hashInfo[h].size }

// BlockSize is the HMAC key block length in bytes.
func (h Hash) BlockSize() int { return hashInfo[h].block }

// MaxLanes is how many chains one State holds: a 64-byte row holds one
// word of each.
func (h Hash) MaxLanes() int { return 64 / hashInfo[h].wordBytes }

// The sections of a State.
const (
	secInner = iota // the state after compressing K xor ipad
	secOuter        // after K xor opad
	secU            // the last U
	secAcc          // T, the xor of all U so far
)

// State holds the chains of one kernel group in lane-sliced order: four
// sections of eight 64-byte rows, row j of a section holding state word j
// of every lane (8 lanes of uint64 for SHA-512, 16 of uint32 for SHA-256
// RIPEMD-160 (five rows) and BLAKE2s), in native byte order. The
// assembly kernels address this layout directly (see asmgen/gen.go).
type State struct {
	w [4][8][8]uint64
}

func (s *State) w32() *[4][8][16]uint32 { return (*[4][8][16]uint32)(unsafe.Pointer(&s.w)) }

func (s *State) get(h Hash, sec, row, lane int) uint64 {
	if hashInfo[h].wordBytes == 8 {
		return s.w[sec][row][lane]
	}
	return uint64(s.w32()[sec][row][lane])
}

func (s *State) set(h Hash, sec, row, lane int, v uint64) {
	if hashInfo[h].wordBytes == 8 {
		s.w[sec][row][lane] = v
	} else {
		s.w32()[sec][row][lane] = uint32(v)
	}
}

func (s *State) check(h Hash, lane int) {
	if h < 0 || h >= numHashes || lane < 0 || lane >= h.MaxLanes() {
		panic(fmt.Sprintf("lanes: lane %d out of range for %v", lane, h))
	}
}

// word reads digest word j of b in h's byte order.
func word(h Hash, b []byte, j int) uint64 {
	in := hashInfo[h]
	switch {
	case in.wordBytes == 8:
		return binary.BigEndian.Uint64(b[8*j:])
	case in.littleEndian:
		return uint64(binary.LittleEndian.Uint32(b[4*j:]))
	}
	return uint64(binary.BigEndian.Uint32(b[4*j:]))
}

func putWord(h Hash, b []byte, j int, v uint64) {
	in := hashInfo[h]
	switch {
	case in.wordBytes == 8:
		binary.BigEndian.PutUint64(b[8*j:], v)
	case in.littleEndian:
		binary.LittleEndian.PutUint32(b[4*j:], uint32(v))
	default:
		binary.BigEndian.PutUint32(b[4*j:], uint32(v))
	}
}

// SetKey sets the keyed HMAC states of lane from the key blocks ipad = K
// xor 0x36.. and opad = K xor 0x5c.. (each h.BlockSize() bytes).
func (s *State) SetKey(h Hash, lane int, ipad, opad []byte) {
	s.check(h, lane)
	if len(ipad) != h.BlockSize() || len(opad) != h.BlockSize() {
		panic("lanes: key block of the wrong length")
	}
	for sec, pad := range [2][]byte{ipad, opad} {
		var st [8]uint64
		switch h {
		case SHA512:
			st = iv512
			var w [80]uint64
			for j := range 16 {
				w[j] = binary.BigEndian.Uint64(pad[8*j:])
			}
			compress512(&st, &w)
			clear(w[:])
		case SHA256:
			h32 := iv256
			var w [64]uint32
			for j := range 16 {
				w[j] = binary.BigEndian.Uint32(pad[4*j:])
			}
			compress256(&h32, &w)
			clear(w[:])
			for j, v := range h32 {
				st[j] = uint64(v)
			}
			clear(h32[:])
		case RIPEMD160:
			h32 := ripemd160.IV
			ripemd160.Block(&h32, pad)
			for j, v := range h32 {
				st[j] = uint64(v)
			}
			clear(h32[:])
		case BLAKE2s256:
			h32 := blake2sIV
			h32[0] ^= blake2sParam
			var m [16]uint32
			for j := range 16 {
				m[j] = binary.LittleEndian.Uint32(pad[4*j:])
			}
			compressBLAKE2s(&h32, &m, 64, false)
			clear(m[:])
			for j, v := range h32 {
				st[j] = uint64(v)
			}
			clear(h32[:])
		}
		for j := range hashInfo[h].words {
			s.set(h, sec, j, lane, st[j])
		}
		clear(st[:])
	}
}

// SetU starts lane's chain at U_1 = u (h.Size() bytes): U = T = u.
func (s *State) SetU(h Hash, lane int, u []byte) {
	s.check(h, lane)
	if len(u) != h.Size() {
		panic("lanes: U of the wrong length")
	}
	for j := range hashInfo[h].words {
		v := word(h, u, j)
		s.set(h, secU, j, lane, v)
		s.set(h, secAcc, j, lane, v)
	}
}

// Sum writes lane's T (h.Size() bytes) to dst.
func (s *State) Sum(h Hash, lane int, dst []byte) {
	s.check(h, lane)
	for j := range hashInfo[h].words {
		putWord(h, dst, j, s.get(h, secAcc, j, lane))
	}
}

// Wipe zeroes the whole state (keyed states, U and T are all secret).
func (s *State) Wipe() { clear(s.w[:]) }
