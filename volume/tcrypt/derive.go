package tcrypt

import (
	"context"

	"github.com/cryptvol/cryptvol/kdf"
)

// params turns a candidate into the kdf package's description of it.
func (k kdfCandidate) params() kdf.Params {
	if k.argon2() {
		return kdf.Params{Kind: kdf.KindArgon2id, Iterations: uint32(k.Iterations), MemoryKiB: uint32(k.MemoryKiB), Parallelism: 1}
	}
	return kdf.Params{Kind: kdf.KindPBKDF2, PRF: k.PRF, Iterations: uint32(k.Iterations)}
}

// deriveHeaderKey derives the 192-byte header key from the KDF input and
// the header's salt.
func deriveHeaderKey(ctx context.Context, k kdfCandidate, pass, salt []byte) ([]byte, error) {
	return kdf.Derive(ctx, k.params(), pass, salt, headerKeySize)
}

// keyLenFor is how much header key a search needs to derive to try
// schemes that use the first need bytes of it. PBKDF2's output is a
// series of independent blocks, so its first bytes cost less than the
// whole key (VeraCrypt's default AES with SHA-512 needs one block of
// three); Argon2's output depends on its length, so it is always derived
// whole.
func (k kdfCandidate) keyLenFor(need int) int {
	if k.argon2() || need <= 0 || need > headerKeySize {
		return headerKeySize
	}
	return need
}
