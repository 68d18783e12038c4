package argon2

//go:generate go run gen_block.go
//go:generate go run gen_amd64.go

// processBlockGeneric computes G(x, y) into out (out ^= G(x, y) when xor
// is set, for passes after the first in version 0x13): R = x xor y, then
// P over the rows and the columns of R, xored with R. out may alias x or y.
func processBlockGeneric(out, x, y *block, xor bool) {
	var r, t block
	for i := range r {
		r[i] = x[i] ^ y[i]
	}
	t = r
	permuteAll(&t)
	if xor {
		for i := range out {
			out[i] ^= t[i] ^ r[i]
		}
	} else {
		for i := range out {
			out[i] = t[i] ^ r[i]
		}
	}
}
