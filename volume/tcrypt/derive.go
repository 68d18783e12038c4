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
