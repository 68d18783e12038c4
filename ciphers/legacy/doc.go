// Package legacy implements the 64-bit-block ciphers of old TrueCrypt
// volumes (TrueCrypt 4.x/5.x, CBC era) and of LUKS headers made with them:
// Blowfish in its standard big-endian form and in TrueCrypt's little-endian
// form, CAST5 (CAST-128) and Triple DES.
//
// They are compatibility ciphers: correctness and a batched,
// allocation-free interface matter most. Every type works on many 8-byte
// blocks per call; dst and src may be the same slice. Blowfish and CAST5
// run four blocks at a time, which keeps them ahead of OpenSSL (see
// bench_vs_openssl.sh).
package legacy

// BlockSize is the block size in bytes of every cipher in this package.
const BlockSize = 8

// Implementation names the code paths in use.
func Implementation() string {
	return "Blowfish: own, 4 blocks at a time; CAST5: own (RFC 2144), 4 blocks at a time; Triple DES: crypto/des, batched"
}

func checkLengths(name string, dst, src []byte) {
	if len(src)%BlockSize != 0 {
		panic(name + ": input not a multiple of the block size")
	}
	if len(dst) < len(src) {
		panic(name + ": output smaller than input")
	}
}
