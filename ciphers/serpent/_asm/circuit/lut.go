package circuit

import "math/rand"

// lutOf reports whether T is a function of the three nodes' truth tables
// (a, b, c) and returns the VPTERNLOGD immediate computing it.
func lutOf(T, a, b, c uint16) (uint8, bool) {
	var imm, seen uint8
	for r := 0; r < 16; r++ {
		k := uint8(a>>r&1)<<2 | uint8(b>>r&1)<<1 | uint8(c>>r&1)
		v := uint8(T >> r & 1)
		if seen>>k&1 == 1 {
			if imm>>k&1 != v {
				return 0, false
			}
			continue
		}
		seen |= 1 << k
		imm |= v << k
	}
	return imm, true
}

type lutState struct {
	g  []Gate
	tt []uint16
}

func (s *lutState) add(g Gate) int {
	t := Lut3(g.Imm, s.tt[g.A], s.tt[g.B], s.tt[g.C])
	for i, x := range s.tt {
		if x == t {
			return i
		}
	}
	s.g = append(s.g, g)
	s.tt = append(s.tt, t)
	return len(s.tt) - 1
}

func triples(n int) [][3]int {
	var out [][3]int
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			for c := b + 1; c < n; c++ {
				out = append(out, [3]int{a, b, c})
			}
		}
	}
	return out
}

// oneLut finds a single gate over existing nodes computing T.
func (s *lutState) oneLut(rnd *rand.Rand, T uint16) (Gate, bool) {
	tr := triples(len(s.tt))
	for _, k := range rnd.Perm(len(tr)) {
		t := tr[k]
		if imm, ok := lutOf(T, s.tt[t[0]], s.tt[t[1]], s.tt[t[2]]); ok {
			return Gate{Op: Lut, A: t[0], B: t[1], C: t[2], Imm: imm}, true
		}
	}
	return Gate{}, false
}

// SearchLut returns the smallest VPTERNLOGD circuit found for s.
func SearchLut(s [16]uint8, trials int, seed int64) *Circuit {
	rnd := rand.New(rand.NewSource(seed))
	targets := Targets(s)
	var best *Circuit
	for t := 0; t < trials; t++ {
		st := &lutState{}
		for i := 0; i < 4; i++ {
			st.g = append(st.g, Gate{Op: In})
			st.tt = append(st.tt, InputTT(i))
		}
		var out [4]int
		for _, j := range rnd.Perm(4) {
			T := targets[j]
			done := false
			for i, x := range st.tt {
				if x == T {
					out[j], done = i, true
					break
				}
			}
			if done {
				continue
			}
			if g, ok := st.oneLut(rnd, T); ok {
				out[j] = st.add(g)
				continue
			}
			// Two gates: a new node v = lut(a, b, c), then T = lut(v, d, e).
			// Among the first candidates found, prefer a v that also lets a
			// later output be a single gate.
			type cand struct {
				g1, g2 Gate
				score  int
			}
			var cands []cand
			tr := triples(len(st.tt))
			n := len(st.tt)
		search:
			for _, k := range rnd.Perm(len(tr)) {
				a, b, c := tr[k][0], tr[k][1], tr[k][2]
				for _, imm := range rnd.Perm(256) {
					v := Lut3(uint8(imm), st.tt[a], st.tt[b], st.tt[c])
					for d := 0; d < n; d++ {
						for e := d + 1; e < n; e++ {
							imm2, ok := lutOf(T, v, st.tt[d], st.tt[e])
							if !ok {
								continue
							}
							score := 0
							for _, other := range targets {
								if other == T {
									continue
								}
								tt := append(append([]uint16(nil), st.tt...), v)
								for _, t3 := range triples(len(tt)) {
									if t3[2] != len(tt)-1 {
										continue
									}
									if _, ok := lutOf(other, tt[t3[0]], tt[t3[1]], tt[t3[2]]); ok {
										score++
										break
									}
								}
							}
							cands = append(cands, cand{Gate{Op: Lut, A: a, B: b, C: c, Imm: uint8(imm)}, Gate{Op: Lut, B: d, C: e, Imm: imm2}, score})
							if len(cands) >= 64 {
								break search
							}
						}
					}
				}
			}
			if len(cands) > 0 {
				bi := 0
				for i, c := range cands {
					if c.score > cands[bi].score {
						bi = i
					}
				}
				vi := st.add(cands[bi].g1)
				g2 := cands[bi].g2
				g2.A = vi
				out[j] = st.add(g2)
				continue
			}
			// Three gates: Shannon split on x3, T = x3 ? g1 : g0.
			var g0, g1 uint16
			for r := 0; r < 8; r++ {
				g0 |= (T >> r & 1) << r
				g1 |= (T >> (r + 8) & 1) << r
			}
			spread := func(h uint16) uint16 { return h | h<<8 } // as a function of x0..x2
			i0 := st.add(mustLut(spread(g0), st.tt[0], st.tt[1], st.tt[2], 0, 1, 2))
			i1 := st.add(mustLut(spread(g1), st.tt[0], st.tt[1], st.tt[2], 0, 1, 2))
			out[j] = st.add(mustLut(T, st.tt[3], st.tt[i1], st.tt[i0], 3, i1, i0))
		}
		c := prune(&Circuit{Gates: st.g, Out: out})
		if best == nil || len(c.Gates) < len(best.Gates) {
			best = c
		}
	}
	return best
}

func mustLut(T, a, b, c uint16, ia, ib, ic int) Gate {
	imm, ok := lutOf(T, a, b, c)
	if !ok {
		panic("not a function of the chosen inputs")
	}
	return Gate{Op: Lut, A: ia, B: ib, C: ic, Imm: imm}
}
