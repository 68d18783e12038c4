package kdf

import "context"

// DeriveMany derives keyLen bytes for each salt with the same parameters
// and password, as Derive would one by one (a volume's header copies each
// have their own salt). It stops at the first error, wiping what it had.
func DeriveMany(ctx context.Context, p Params, password []byte, salts [][]byte, keyLen int) ([][]byte, error) {
	keys := make([][]byte, 0, len(salts))
	for _, s := range salts {
		k, err := Derive(ctx, p, password, s, keyLen)
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
