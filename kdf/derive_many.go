package kdf

import (
	"context"
	"fmt"

	"github.com/cryptvol/cryptvol/hashes"
)

// DeriveMany is Derive for several salts with the same password and
// parameters: the header copies a volume driver tries one password on
// (normal, hidden, backup). For PBKDF2 all output blocks of all salts are
// computed together, so they fill the SIMD lanes and cores that the
// blocks of one derivation leave idle (3 SHA-512 blocks use 3 of 8 lanes):
// two or three header keys cost little more than one. Other KDFs derive
// one salt after another. The keys are in the order of salts; on error
// none is returned.
func DeriveMany(ctx context.Context, p Params, password []byte, salts [][]byte, keyLen int) ([][]byte, error) {
	if keyLen < 1 {
		return nil, fmt.Errorf("kdf: key length %d < 1", keyLen)
	}
	if p.Kind == KindPBKDF2 {
		h, err := hashes.Lookup(p.PRF)
		if err != nil {
			return nil, err
		}
		if p.Iterations < 1 {
			return nil, fmt.Errorf("kdf: PBKDF2 iteration count %d < 1", p.Iterations)
		}
		return pbkdf2Salts(ctx, h, password, salts, int(p.Iterations), keyLen)
	}
	keys := make([][]byte, 0, len(salts))
	for _, salt := range salts {
		k, err := Derive(ctx, p, password, salt, keyLen)
		if err != nil {
			for _, k := range keys {
				clear(k)
			}
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, nil
}
