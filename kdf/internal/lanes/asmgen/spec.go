package main

// spec is one SHA-2 function as the kernels see it: a word size, a round
// count, its constants, its rotation amounts (FIPS 180-4 section 4.1.2
// and 4.1.3) and the padding of PBKDF2's fixed-length HMAC messages.
type spec struct {
	name   string // "512" or "256", as in the kernel names
	bits   int    // word size
	rounds int
	k      []uint64
	// Σ0 and Σ1 rotate three times; σ0 and σ1 rotate twice and shift.
	bigSigma0, bigSigma1     [3]int
	smallSigma0, smallSigma1 [3]int
	// pad is W[8..15] of both HMAC compressions of a PBKDF2 iteration:
	// each hashes one key block (ipad or opad) followed by a digest-sized
	// message, so the second block is always the digest (W[0..7]), the
	// 0x80 byte, zeros and the length of block plus digest in bits.
	pad [8]uint64
}

func sha2Specs() (s512, s256 *spec) {
	k, _ := sha2Constants()
	s512 = &spec{
		name: "512", bits: 64, rounds: 80, k: k[:],
		bigSigma0: [3]int{28, 34, 39}, bigSigma1: [3]int{14, 18, 41},
		smallSigma0: [3]int{1, 8, 7}, smallSigma1: [3]int{19, 61, 6},
		pad: [8]uint64{1 << 63, 0, 0, 0, 0, 0, 0, (128 + 64) * 8},
	}
	k256 := make([]uint64, 64)
	for i := range k256 {
		k256[i] = k[i] >> 32
	}
	s256 = &spec{
		name: "256", bits: 32, rounds: 64, k: k256,
		bigSigma0: [3]int{2, 13, 22}, bigSigma1: [3]int{6, 11, 25},
		smallSigma0: [3]int{7, 18, 3}, smallSigma1: [3]int{17, 19, 10},
		pad: [8]uint64{1 << 31, 0, 0, 0, 0, 0, 0, (64 + 32) * 8},
	}
	return s512, s256
}

func (s *spec) mask() uint64 {
	if s.bits == 64 {
		return ^uint64(0)
	}
	return 1<<s.bits - 1
}

func (s *spec) rotr(x uint64, n int) uint64 {
	return (x>>n | x<<(s.bits-n)) & s.mask()
}

// smallSigma evaluates σ0 (which 0) or σ1 on a constant word.
func (s *spec) smallSigma(which int, x uint64) uint64 {
	r := s.smallSigma0
	if which == 1 {
		r = s.smallSigma1
	}
	return s.rotr(x, r[0]) ^ s.rotr(x, r[1]) ^ x>>r[2]
}

// term is one addend of a scheduled word W[t] = σ1(W[t-2]) + W[t-7] +
// σ0(W[t-15]) + W[t-16]: the word src, through σ0 or σ1 or plain (-1).
type term struct{ sigma, src int }

// word says how the kernels obtain W[t]: a constant (t in 8..15), the
// message (t < 8, already in place), or the sum of its variable terms
// plus the constant c that the constant terms fold into.
type word struct {
	isConst bool
	val     uint64
	terms   []term
	c       uint64
}

// schedule folds the constant padding words through the message schedule.
func (s *spec) schedule() []word {
	w := make([]word, s.rounds)
	for t := 8; t < 16; t++ {
		w[t] = word{isConst: true, val: s.pad[t-8]}
	}
	for t := 16; t < s.rounds; t++ {
		var d word
		for _, tm := range []term{{1, t - 2}, {-1, t - 7}, {0, t - 15}, {-1, t - 16}} {
			src := w[tm.src]
			if !src.isConst {
				d.terms = append(d.terms, tm)
				continue
			}
			v := src.val
			if tm.sigma >= 0 {
				v = s.smallSigma(tm.sigma, v)
			}
			d.c = (d.c + v) & s.mask()
		}
		if len(d.terms) == 0 {
			panic("constant scheduled word") // W[0..7] reach every t >= 16
		}
		w[t] = d
	}
	return w
}
