package lanes

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// Hash selects SHA-256 or SHA-512.
type Hash int

const (
	SHA256 Hash = iota
	SHA512
)

func (h Hash) String() string {
	if h == SHA512 {
		return "SHA-512"
	}
	return "SHA-256"
}

// Size is the digest length (the PBKDF2 block length) in bytes.
func (h Hash) Size() int { return 64 / int(2-h) }

// BlockSize is the HMAC key block length in bytes.
func (h Hash) BlockSize() int { return 128 / int(2-h) }

// MaxLanes is how many chains one State holds: a 64-byte row holds one
// word of each.
func (h Hash) MaxLanes() int { return 16 / int(1+h) }

// The sections of a State.
const (
	secInner = iota // the state after compressing K xor ipad
	secOuter        // after K xor opad
	secU            // the last U
	secAcc          // T, the xor of all U so far
)

// State holds the chains of one kernel group in lane-sliced order: four
// sections of eight 64-byte rows, row j of a section holding state word j
// of every lane (8 lanes of uint64 for SHA-512, 16 of uint32 for SHA-256),
// in native byte order. The assembly kernels address this layout
// directly (see asmgen/gen.go).
type State struct {
	w [4][8][8]uint64
}

func (s *State) w32() *[4][8][16]uint32 { return (*[4][8][16]uint32)(unsafe.Pointer(&s.w)) }

func (s *State) check(h Hash, lane int) {
	if lane < 0 || lane >= h.MaxLanes() {
		panic(fmt.Sprintf("lanes: lane %d out of range for %v", lane, h))
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
		if h == SHA512 {
			st := iv512
			var w [80]uint64
			for j := range 16 {
				w[j] = binary.BigEndian.Uint64(pad[8*j:])
			}
			compress512(&st, &w)
			clear(w[:])
			for j := range 8 {
				s.w[sec][j][lane] = st[j]
			}
			clear(st[:])
		} else {
			st := iv256
			var w [64]uint32
			for j := range 16 {
				w[j] = binary.BigEndian.Uint32(pad[4*j:])
			}
			compress256(&st, &w)
			clear(w[:])
			for j := range 8 {
				s.w32()[sec][j][lane] = st[j]
			}
			clear(st[:])
		}
	}
}

// SetU starts lane's chain at U_1 = u (h.Size() bytes): U = T = u.
func (s *State) SetU(h Hash, lane int, u []byte) {
	s.check(h, lane)
	if len(u) != h.Size() {
		panic("lanes: U of the wrong length")
	}
	for j := range 8 {
		if h == SHA512 {
			v := binary.BigEndian.Uint64(u[8*j:])
			s.w[secU][j][lane], s.w[secAcc][j][lane] = v, v
		} else {
			v := binary.BigEndian.Uint32(u[4*j:])
			s.w32()[secU][j][lane], s.w32()[secAcc][j][lane] = v, v
		}
	}
}

// Sum writes lane's T (h.Size() bytes) to dst.
func (s *State) Sum(h Hash, lane int, dst []byte) {
	s.check(h, lane)
	for j := range 8 {
		if h == SHA512 {
			binary.BigEndian.PutUint64(dst[8*j:], s.w[secAcc][j][lane])
		} else {
			binary.BigEndian.PutUint32(dst[4*j:], s.w32()[secAcc][j][lane])
		}
	}
}

// Wipe zeroes the whole state (keyed states, U and T are all secret).
func (s *State) Wipe() { clear(s.w[:]) }
