package camellia

import "encoding/binary"

// schedule holds the subkeys in the order one pass of the data randomizing
// part uses them, so encryption and decryption share one routine: the
// decryption schedule is the encryption one reversed (RFC 3713 2.3.2).
type schedule struct {
	kw     [4]uint64    // whitening keys: kw1, kw2 before, kw3, kw4 after
	k      [24]uint64   // round keys k1..k18 (128-bit key) or k1..k24
	ke     [6]uint64    // FL/FLINV layer keys ke1..ke4 or ke1..ke6
	rounds int          // 18 or 24
	arch   archSchedule // the same subkeys laid out for an assembly kernel
}

// The key-schedule constants Sigma1..Sigma6 (RFC 3713 2.2).
var sigma = [6]uint64{
	0xA09E667F3BCC908B,
	0xB67AE8584CAA73B2,
	0xC6EF372FE94F82BE,
	0x54FF53A5F1D36F1C,
	0x10E527FADE682D1D,
	0xB05688C2B3E6C1FD,
}

// u128 is a 128-bit key-schedule value split into two big-endian halves.
type u128 struct{ hi, lo uint64 }

// rotl returns v rotated left by n bits, 0 <= n < 128. Go shifts of 64 or
// more yield 0, so n == 0 and n == 64 need no special case.
func (v u128) rotl(n uint) u128 {
	if n >= 64 {
		v = u128{v.lo, v.hi}
		n -= 64
	}
	return u128{v.hi<<n | v.lo>>(64-n), v.lo<<n | v.hi>>(64-n)}
}

// keyPart names one 64-bit subkey: half (0 = left, 1 = right) of src rotated
// left by rot bits, where src indexes {KL, KR, KA, KB}.
type keyPart struct {
	src  uint8
	rot  uint8
	half uint8
}

const (
	srcKL = iota
	srcKR
	srcKA
	srcKB
)

// Subkey tables of RFC 3713 2.2, listed as kw1..kw4, k1.., ke1.., in order.
var (
	kw128 = [4]keyPart{{srcKL, 0, 0}, {srcKL, 0, 1}, {srcKA, 111, 0}, {srcKA, 111, 1}}
	k128  = [18]keyPart{
		{srcKA, 0, 0}, {srcKA, 0, 1}, {srcKL, 15, 0}, {srcKL, 15, 1}, {srcKA, 15, 0}, {srcKA, 15, 1},
		{srcKL, 45, 0}, {srcKL, 45, 1}, {srcKA, 45, 0}, {srcKL, 60, 1}, {srcKA, 60, 0}, {srcKA, 60, 1},
		{srcKL, 94, 0}, {srcKL, 94, 1}, {srcKA, 94, 0}, {srcKA, 94, 1}, {srcKL, 111, 0}, {srcKL, 111, 1},
	}
	ke128 = [4]keyPart{{srcKA, 30, 0}, {srcKA, 30, 1}, {srcKL, 77, 0}, {srcKL, 77, 1}}

	kw256 = [4]keyPart{{srcKL, 0, 0}, {srcKL, 0, 1}, {srcKB, 111, 0}, {srcKB, 111, 1}}
	k256  = [24]keyPart{
		{srcKB, 0, 0}, {srcKB, 0, 1}, {srcKR, 15, 0}, {srcKR, 15, 1}, {srcKA, 15, 0}, {srcKA, 15, 1},
		{srcKB, 30, 0}, {srcKB, 30, 1}, {srcKL, 45, 0}, {srcKL, 45, 1}, {srcKA, 45, 0}, {srcKA, 45, 1},
		{srcKR, 60, 0}, {srcKR, 60, 1}, {srcKB, 60, 0}, {srcKB, 60, 1}, {srcKL, 77, 0}, {srcKL, 77, 1},
		{srcKR, 94, 0}, {srcKR, 94, 1}, {srcKA, 94, 0}, {srcKA, 94, 1}, {srcKL, 111, 0}, {srcKL, 111, 1},
	}
	ke256 = [6]keyPart{
		{srcKR, 30, 0}, {srcKR, 30, 1}, {srcKL, 60, 0}, {srcKL, 60, 1}, {srcKA, 77, 0}, {srcKA, 77, 1},
	}
)

func (p keyPart) value(src *[4]u128) uint64 {
	v := src[p.src].rotl(uint(p.rot))
	if p.half == 0 {
		return v.hi
	}
	return v.lo
}

// expandKey fills s with the encryption subkeys for a 16-, 24- or 32-byte key.
func expandKey(s *schedule, key []byte) {
	var src [4]u128
	kl := &src[srcKL]
	kr := &src[srcKR]
	kl.hi = binary.BigEndian.Uint64(key[0:8])
	kl.lo = binary.BigEndian.Uint64(key[8:16])
	switch len(key) {
	case 24:
		kr.hi = binary.BigEndian.Uint64(key[16:24])
		kr.lo = ^kr.hi
	case 32:
		kr.hi = binary.BigEndian.Uint64(key[16:24])
		kr.lo = binary.BigEndian.Uint64(key[24:32])
	}

	d1, d2 := kl.hi^kr.hi, kl.lo^kr.lo
	d2 ^= f(d1 ^ sigma[0])
	d1 ^= f(d2 ^ sigma[1])
	d1 ^= kl.hi
	d2 ^= kl.lo
	d2 ^= f(d1 ^ sigma[2])
	d1 ^= f(d2 ^ sigma[3])
	src[srcKA] = u128{d1, d2}

	if len(key) == 16 {
		s.rounds = 18
		for i, p := range kw128 {
			s.kw[i] = p.value(&src)
		}
		for i, p := range k128 {
			s.k[i] = p.value(&src)
		}
		for i, p := range ke128 {
			s.ke[i] = p.value(&src)
		}
		return
	}

	d1, d2 = src[srcKA].hi^kr.hi, src[srcKA].lo^kr.lo
	d2 ^= f(d1 ^ sigma[4])
	d1 ^= f(d2 ^ sigma[5])
	src[srcKB] = u128{d1, d2}

	s.rounds = 24
	for i, p := range kw256 {
		s.kw[i] = p.value(&src)
	}
	for i, p := range k256 {
		s.k[i] = p.value(&src)
	}
	for i, p := range ke256 {
		s.ke[i] = p.value(&src)
	}
}

// inverse returns the decryption schedule: whitening keys swapped pairwise,
// round keys and FL-layer keys in reverse order.
func (s *schedule) inverse() schedule {
	d := schedule{rounds: s.rounds}
	d.kw = [4]uint64{s.kw[2], s.kw[3], s.kw[0], s.kw[1]}
	for i := 0; i < s.rounds; i++ {
		d.k[i] = s.k[s.rounds-1-i]
	}
	layers := s.rounds/6 - 1
	for i := 0; i < 2*layers; i++ {
		d.ke[i] = s.ke[2*layers-1-i]
	}
	return d
}
