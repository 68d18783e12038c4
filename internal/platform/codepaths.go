package platform

import (
	"fmt"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/adiantum"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf"
)

// CodePaths lists the code path each cipher and each PBKDF2 PRF with SIMD
// lanes takes on this CPU, one per line under a heading ("cipher code
// paths:", "kdf code paths:"); the legacy ciphers, which share one
// description, are grouped.
func CodePaths() string {
	var b strings.Builder
	b.WriteString("cipher code paths:\n")
	var legacy []string
	legacyImpl := map[string][]string{}
	for _, s := range ciphers.All() {
		if s.Legacy {
			if _, ok := legacyImpl[s.Implementation()]; !ok {
				legacy = append(legacy, s.Implementation())
			}
			legacyImpl[s.Implementation()] = append(legacyImpl[s.Implementation()], s.Name)
			continue
		}
		fmt.Fprintf(&b, "  %-11s %s\n", s.Name, s.Implementation())
	}
	for _, impl := range legacy {
		fmt.Fprintf(&b, "  legacy (%s): %s\n", strings.Join(legacyImpl[impl], ", "), impl)
	}
	// Not a volume cipher: `cryptvol enc -chacha20` uses it.
	fmt.Fprintf(&b, "  %-11s %s (enc)\n", "ChaCha20", chacha20.Implementation())
	// LUKS2 xchacha12,aes-adiantum-plain64: its stream cipher and hash
	// (its AES is the AES line's).
	fmt.Fprintf(&b, "  %-11s %s (Adiantum)\n", "XChaCha", chacha20.XImplementation())
	fmt.Fprintf(&b, "  %-11s %s (Adiantum)\n", "NH", adiantum.NHImplementation())
	// The PRFs whose PBKDF2 chains run in SIMD lanes.
	b.WriteString("kdf code paths:\n")
	for _, h := range []string{hashes.SHA512, hashes.SHA256, hashes.BLAKE2s256, hashes.RIPEMD160} {
		fmt.Fprintf(&b, "  PBKDF2-%-11s %s\n", h, kdf.PBKDF2Path(h))
	}
	return b.String()
}
