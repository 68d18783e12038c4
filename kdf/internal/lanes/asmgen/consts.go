package main

import (
	"fmt"
	"math/big"
)

// The SHA-2 constants of FIPS 180-4, computed rather than copied: K (section
// 4.2.2/4.2.3) are the first 64 bits of the fractional parts of the cube
// roots of the first eighty primes, the initial hash values (5.3.3/5.3.5)
// those of the square roots of the first eight primes. SHA-256 takes the
// upper 32 bits of the same fractions (its 64 constants are the first 64).

const precision = 256 // bits; ample for 64 fraction bits of a root below 8

// primes returns the first n primes.
func primes(n int) []int64 {
	var ps []int64
	for c := int64(2); len(ps) < n; c++ {
		prime := true
		for _, p := range ps {
			if p*p > c {
				break
			}
			if c%p == 0 {
				prime = false
				break
			}
		}
		if prime {
			ps = append(ps, c)
		}
	}
	return ps
}

// fraction64 returns the first 64 bits of the fractional part of x.
func fraction64(x *big.Float) uint64 {
	i, _ := x.Int(nil)
	f := new(big.Float).SetPrec(precision).Sub(x, new(big.Float).SetInt(i))
	f.SetMantExp(f, 64)
	u, acc := f.Uint64()
	if acc == big.Above {
		panic("fraction rounded up")
	}
	return u
}

// cbrt is Newton's iteration x <- (2x + p/x^2) / 3 from above.
func cbrt(p int64) *big.Float {
	v := new(big.Float).SetPrec(precision).SetInt64(p)
	x := new(big.Float).SetPrec(precision).SetInt64(p) // >= cbrt(p) for p >= 1
	three := new(big.Float).SetPrec(precision).SetInt64(3)
	for range 400 {
		x2 := new(big.Float).SetPrec(precision).Mul(x, x)
		q := new(big.Float).SetPrec(precision).Quo(v, x2)
		next := new(big.Float).SetPrec(precision).Add(x, x)
		next.Add(next, q).Quo(next, three)
		if next.Cmp(x) == 0 {
			break
		}
		x = next
	}
	// Check: x^3 must be p to far more than 64 fraction bits.
	c := new(big.Float).SetPrec(precision).Mul(x, x)
	c.Mul(c, x).Sub(c, v)
	if c.Sign() != 0 && c.Abs(c).MantExp(nil) > -200 {
		panic(fmt.Sprintf("cube root of %d did not converge", p))
	}
	return x
}

// sha2Constants returns SHA-512's K and initial hash value.
func sha2Constants() (k [80]uint64, iv [8]uint64) {
	ps := primes(80)
	for i, p := range ps {
		k[i] = fraction64(cbrt(p))
	}
	for i, p := range ps[:8] {
		iv[i] = fraction64(new(big.Float).SetPrec(precision).Sqrt(new(big.Float).SetPrec(precision).SetInt64(p)))
	}
	return k, iv
}
