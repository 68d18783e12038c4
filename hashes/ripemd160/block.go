package ripemd160

//go:generate go run gen_block.go

// block is the compression function used by Digest. It is a plain function
// (not a function variable) so escape analysis sees that the state and the
// buffer stay on the caller's stack: Sum then allocates nothing.
func block(h *[5]uint32, p []byte) { blockGeneric(h, p) }
