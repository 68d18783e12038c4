package circuit

import (
	"math/rand"
)

// The boolean search follows Kwan's bitslice-DES method ("Reducing the gate
// count of bitslice DES", 2000): an output is matched against existing
// nodes, then one or two new gates, and otherwise split on an input bit into
// two half-specified sub-functions (the other half being don't-care) that are
// built recursively and joined with two gates. Random output orders and
// tie-breaks are tried and the smallest circuit kept.

type state struct {
	g  []Gate
	tt []uint16
}

func newState() *state {
	s := &state{}
	for i := 0; i < 4; i++ {
		s.g = append(s.g, Gate{Op: In})
		s.tt = append(s.tt, InputTT(i))
	}
	return s
}

func eval2(op Op, a, b uint16) uint16 {
	switch op {
	case And:
		return a & b
	case Or:
		return a | b
	case Xor:
		return a ^ b
	case AndNot:
		return ^a & b
	}
	panic("bad op")
}

// add appends a gate unless a node with the same truth table exists.
func (s *state) add(op Op, a, b int) (*state, int) {
	var t uint16
	if op == Not {
		t = ^s.tt[a]
	} else {
		t = eval2(op, s.tt[a], s.tt[b])
	}
	for i, x := range s.tt {
		if x == t {
			return s, i
		}
	}
	n := &state{
		g:  append(append([]Gate(nil), s.g...), Gate{Op: op, A: a, B: b}),
		tt: append(append([]uint16(nil), s.tt...), t),
	}
	return n, len(n.g) - 1
}

var binOps = []Op{And, Or, Xor, AndNot}

type searcher struct {
	rnd      *rand.Rand
	maxLevel int
}

type result struct {
	s   *state
	idx int
}

// build returns a state holding a node equal to T on the rows in M, with at
// most limit nodes, or ok=false.
func (r *searcher) build(s *state, T, M uint16, level, limit int) (result, bool) {
	n := len(s.tt)
	// An existing node.
	for _, i := range r.rnd.Perm(n) {
		if (s.tt[i]^T)&M == 0 {
			return result{s, i}, true
		}
	}
	if n+1 > limit {
		return result{}, false
	}
	// One new gate.
	var one []Gate
	for a := 0; a < n; a++ {
		if (^s.tt[a]^T)&M == 0 {
			one = append(one, Gate{Op: Not, A: a})
		}
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			for _, op := range binOps {
				if op != AndNot && b < a {
					continue
				}
				if (eval2(op, s.tt[a], s.tt[b])^T)&M == 0 {
					one = append(one, Gate{Op: op, A: a, B: b})
				}
			}
		}
	}
	if len(one) > 0 {
		g := one[r.rnd.Intn(len(one))]
		ns, i := s.add(g.Op, g.A, g.B)
		return result{ns, i}, true
	}
	if n+2 > limit {
		return result{}, false
	}
	// Two new gates: op2(op1(a, b), c).
	if level <= 1 {
		var two [][2]Gate
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a == b {
					continue
				}
				for _, op := range binOps {
					if op != AndNot && b < a {
						continue
					}
					v := eval2(op, s.tt[a], s.tt[b])
					for c := 0; c < n; c++ {
						for _, op2 := range binOps {
							if (eval2(op2, v, s.tt[c])^T)&M == 0 {
								two = append(two, [2]Gate{{Op: op, A: a, B: b}, {Op: op2, A: -1, B: c}})
							}
							if op2 == AndNot && (eval2(op2, s.tt[c], v)^T)&M == 0 {
								two = append(two, [2]Gate{{Op: op, A: a, B: b}, {Op: op2, A: c, B: -1}})
							}
						}
					}
				}
			}
		}
		if len(two) > 0 {
			g := two[r.rnd.Intn(len(two))]
			ns, v := s.add(g[0].Op, g[0].A, g[0].B)
			a, b := g[1].A, g[1].B
			if a < 0 {
				a = v
			}
			if b < 0 {
				b = v
			}
			ns, i := ns.add(g[1].Op, a, b)
			return result{ns, i}, true
		}
	}
	if level >= r.maxLevel {
		return result{}, false
	}
	// Split on an input bit.
	var best result
	found := false
	for _, sel := range r.rnd.Perm(4) {
		S := s.tt[sel]
		if S&M == 0 || S&M == M {
			continue
		}
		for v := 0; v < 6; v++ {
			res, ok := r.split(s, T, M, S, sel, v, level, limit)
			if ok {
				best, found = res, true
				limit = len(res.s.g) - 1 // only accept strictly better ones now
			}
		}
	}
	return best, found
}

// split builds T = join(t0, u) for one of six joins around selector sel.
func (r *searcher) split(s *state, T, M, S uint16, sel, variant, level, limit int) (result, bool) {
	var m0 uint16
	switch variant {
	case 0: // t0 ^ (s & u)
		m0 = M &^ S
	case 1: // t0 ^ (^s & u)
		m0 = M & S
	case 2: // t0 | (s & u)
		m0 = M&^S | M&S&^T
	case 3: // t0 | (^s & u)
		m0 = M&S | M&^S&^T
	case 4: // t0 & (s | u)  ==  ^(^u & s) & t0
		m0 = M&S | M&^S&T
	case 5: // t0 & (^s | u) == ^(^u & ^s)... as ^(^s & ^u)=s|u: t0 & ^(s & ^u)
		m0 = M&^S | M&S&T
	}
	r0, ok := r.build(s, T, m0, level+1, limit-2)
	if !ok {
		return result{}, false
	}
	t0 := r0.s.tt[r0.idx]
	var ut, um uint16
	switch variant {
	case 0:
		ut, um = T^t0, M&S
	case 1:
		ut, um = T^t0, M&^S
	case 2:
		ut, um = T, M&S&^(t0&T)
	case 3:
		ut, um = T, M&^S&^(t0&T)
	case 4:
		ut, um = T, M&^S&^(^t0&^T)
	case 5:
		ut, um = T, M&S&^(^t0&^T)
	}
	r1, ok := r.build(r0.s, ut, um, level+1, limit-2)
	if !ok {
		return result{}, false
	}
	ns, u := r1.s, r1.idx
	var i, w int
	switch variant {
	case 0:
		ns, w = ns.add(And, sel, u)
		ns, i = ns.add(Xor, r0.idx, w)
	case 1:
		ns, w = ns.add(AndNot, sel, u)
		ns, i = ns.add(Xor, r0.idx, w)
	case 2:
		ns, w = ns.add(And, sel, u)
		ns, i = ns.add(Or, r0.idx, w)
	case 3:
		ns, w = ns.add(AndNot, sel, u)
		ns, i = ns.add(Or, r0.idx, w)
	case 4: // t0 & (s | u) = ^(^u & ^s)... use: w = ^s & ^u is two ops; instead ^(^s & ^u)&t0 = AndNot(AndNot(s, ^u)...)
		// s | u, then & t0.
		ns, w = ns.add(Or, sel, u)
		ns, i = ns.add(And, r0.idx, w)
	case 5: // t0 & (^s | u) = t0 & ^(s & ^u) = AndNot(AndNot(u, s), t0)
		ns, w = ns.add(AndNot, u, sel)
		ns, i = ns.add(AndNot, w, r0.idx)
	}
	if len(ns.g) > limit || (ns.tt[i]^T)&M != 0 {
		return result{}, false
	}
	return result{ns, i}, true
}

// SearchBool returns the smallest AND/OR/XOR/ANDN/NOT circuit found for s in
// the given number of randomized trials.
func SearchBool(s [16]uint8, trials int, seed int64) *Circuit {
	r := &searcher{rnd: rand.New(rand.NewSource(seed)), maxLevel: 2}
	targets := Targets(s)
	var best *Circuit
	for t := 0; t < trials; t++ {
		st := newState()
		var out [4]int
		ok := true
		for _, j := range r.rnd.Perm(4) {
			limit := 64
			if best != nil {
				limit = len(best.Gates) - 1
			}
			res, found := r.build(st, targets[j], 0xffff, 0, limit)
			if !found {
				r.maxLevel = 3
				res, found = r.build(st, targets[j], 0xffff, 0, limit)
				r.maxLevel = 2
			}
			if !found {
				ok = false
				break
			}
			st, out[j] = res.s, res.idx
		}
		if !ok {
			continue
		}
		c := prune(&Circuit{Gates: st.g, Out: out})
		if best == nil || len(c.Gates) < len(best.Gates) {
			best = c
		}
	}
	return best
}

// prune drops nodes no output depends on (left by abandoned splits).
func prune(c *Circuit) *Circuit {
	live := make([]bool, len(c.Gates))
	for _, o := range c.Out {
		live[o] = true
	}
	for i := len(c.Gates) - 1; i >= 4; i-- {
		if !live[i] {
			continue
		}
		g := c.Gates[i]
		live[g.A] = true
		if g.Op != Not {
			live[g.B] = true
		}
		if g.Op == Lut {
			live[g.C] = true
		}
	}
	remap := make([]int, len(c.Gates))
	out := &Circuit{}
	for i, g := range c.Gates {
		if i >= 4 && !live[i] {
			continue
		}
		remap[i] = len(out.Gates)
		g.A, g.B, g.C = remap[g.A], remap[g.B], remap[g.C]
		out.Gates = append(out.Gates, g)
	}
	for j, o := range c.Out {
		out.Out[j] = remap[o]
	}
	return out
}
