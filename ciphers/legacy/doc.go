// Package legacy implements the 64-bit-block ciphers of old TrueCrypt
// volumes (TrueCrypt 4.x/5.x, CBC era) and of LUKS headers made with them:
// Blowfish in its standard big-endian form and in TrueCrypt's little-endian
// form, CAST5 (CAST-128) and Triple DES.
//
// They are read-only compatibility ciphers: correctness and a batched,
// allocation-free interface matter, raw speed much less. Every type works on
// many 8-byte blocks per call; dst and src may be the same slice.
package legacy

// BlockSize is the block size in bytes of every cipher in this package.
const BlockSize = 8

// Implementation names the code paths in use.
func Implementation() string {
	return "Blowfish: golang.org/x/crypto/blowfish, batched; CAST5: own (RFC 2144); Triple DES: crypto/des, batched"
}

func checkLengths(name string, dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic(name + ": input not a multiple of the block size")
	}
	if len(dst) < len(src) {
		panic(name + ": output smaller than input")
	}
}
