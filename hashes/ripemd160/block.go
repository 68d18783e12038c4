package ripemd160

//go:generate go run gen_block.go

// block is the compression function used by Digest. It is a plain function
// (not a function variable) so escape analysis sees that the state and the
// buffer stay on the caller's stack: Sum then allocates nothing.
func block(h *[5]uint32, p []byte) { blockGeneric(h, p) }

// IV is RIPEMD-160's initial chaining value.
var IV = [5]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0}

// Block runs the compression function on each 64-byte block of p, for
// callers that keep chaining values themselves (PBKDF2 in SIMD lanes,
// whose scalar fallback and key set-up use it).
func Block(h *[5]uint32, p []byte) { block(h, p) }
