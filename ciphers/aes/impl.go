package aes

// implementation names one code path; Cipher records the one it was built
// for, so tests can force each path the CPU supports on the same vectors.
type implementation int

const (
	implGeneric implementation = iota
	implAESNI
	implVAES
	implARMv8
	implNEON
	implTable
	implVAES2
	implSSE2
)

func (i implementation) String() string {
	switch i {
	case implAESNI:
		return "aes-ni"
	case implVAES:
		return "vaes-avx512"
	case implARMv8:
		return "armv8-ce"
	case implVAES2:
		return "vaes-avx2"
	case implSSE2:
		return "sse2-bitsliced"
	case implNEON:
		return "neon-bitsliced"
	case implTable:
		return "arm-tables (not constant-time; CRYPTVOL_AES_TABLES=1)"
	}
	return "generic-bitsliced"
}

// defaultImpl is the fastest path this CPU supports, set at start-up.
var defaultImpl = bestImpl()

// Implementation names the code path New uses on this CPU: "vaes-avx512",
// "vaes-avx2", "aes-ni", "armv8-ce", "sse2-bitsliced", "neon-bitsliced",
// "generic-bitsliced", or on 32-bit ARM when CRYPTVOL_AES_TABLES=1 asks
// for it the table path.
func Implementation() string { return defaultImpl.String() }
