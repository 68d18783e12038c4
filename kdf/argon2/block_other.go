//go:build !amd64 || purego

package argon2

// useAVX2 is always false here; it exists so tests build everywhere.
var useAVX2 = false

func processBlock(out, x, y *block, xor bool) { processBlockGeneric(out, x, y, xor) }
