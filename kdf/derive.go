package kdf

import (
	"context"
	"fmt"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf/argon2"
)

// Kind names a key-derivation function family.
type Kind int

// The KDFs Derive knows.
const (
	KindPBKDF2 Kind = iota + 1
	KindArgon2id
	KindArgon2i
	KindArgon2d
)

// String returns the KDF name, e.g. "Argon2id".
func (k Kind) String() string {
	switch k {
	case KindPBKDF2:
		return "PBKDF2"
	case KindArgon2id:
		return "Argon2id"
	case KindArgon2i:
		return "Argon2i"
	case KindArgon2d:
		return "Argon2d"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Params fully describes one derivation (apart from password and salt),
// whatever the volume format: what the volume driver tries for each
// candidate PRF and PIM, and what LUKS keyslots store.
type Params struct {
	Kind Kind
	// PRF is the hash of PBKDF2-HMAC (a name hashes.Lookup accepts);
	// unused for Argon2.
	PRF string
	// Iterations is the PBKDF2 iteration count, or the Argon2 passes t.
	Iterations uint32
	// MemoryKiB and Parallelism are Argon2's m and p.
	MemoryKiB   uint32
	Parallelism uint32
}

// String describes the derivation for messages and logs.
func (p Params) String() string {
	if p.Kind == KindPBKDF2 {
		return fmt.Sprintf("PBKDF2-HMAC-%s, %d iterations", p.PRF, p.Iterations)
	}
	return fmt.Sprintf("%s, %d KiB, %d passes, %d lanes", p.Kind, p.MemoryKiB, p.Iterations, p.Parallelism)
}

// Derive computes keyLen bytes of key material from password and salt as p
// says. It stops early with ctx.Err() when ctx ends (so the PRFs still
// running can be abandoned once one of them opened the volume), and for
// Argon2 returns an error wrapping argon2.ErrInsufficientMemory instead of
// exhausting the machine.
func Derive(ctx context.Context, p Params, password, salt []byte, keyLen int) ([]byte, error) {
	if keyLen < 1 {
		return nil, fmt.Errorf("kdf: key length %d < 1", keyLen)
	}
	switch p.Kind {
	case KindPBKDF2:
		h, err := hashes.Lookup(p.PRF)
		if err != nil {
			return nil, err
		}
		if p.Iterations < 1 {
			return nil, fmt.Errorf("kdf: PBKDF2 iteration count %d < 1", p.Iterations)
		}
		return PBKDF2Context(ctx, h, password, salt, int(p.Iterations), keyLen)
	case KindArgon2id, KindArgon2i, KindArgon2d:
		mode := map[Kind]argon2.Mode{KindArgon2id: argon2.Argon2id, KindArgon2i: argon2.Argon2i, KindArgon2d: argon2.Argon2d}[p.Kind]
		if uint64(keyLen) > 1<<32-1 {
			return nil, fmt.Errorf("kdf: key length %d too long", keyLen)
		}
		return argon2.Key(ctx, argon2.Params{
			Mode: mode, Passes: p.Iterations, MemoryKiB: p.MemoryKiB, Parallelism: p.Parallelism,
		}, password, salt, uint32(keyLen))
	}
	return nil, fmt.Errorf("kdf: unknown KDF kind %d", int(p.Kind))
}
