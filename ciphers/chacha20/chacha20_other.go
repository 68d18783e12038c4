//go:build (!amd64 && !arm) || purego

package chacha20

const haveKernel = false

func xorKeyStream16AVX512(state *[16]uint32, dst, src *byte, lumps int) {
	panic("chacha20: no AVX-512 kernel in this build")
}

// Implementation names the code path New's ciphers take here.
func Implementation() string { return "golang.org/x/crypto/chacha20" }
