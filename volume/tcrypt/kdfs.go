package tcrypt

import (
	"sort"
	"strings"
)

// kdfCandidate is one way TrueCrypt or VeraCrypt may have derived a header
// key: a PBKDF2 PRF with an iteration count, or Argon2id with its costs.
type kdfCandidate struct {
	// PRF is the display name: "SHA-512", "Whirlpool", "SHA-256",
	// "BLAKE2s-256", "Streebog", "RIPEMD-160", "SHA-1", or "Argon2id".
	PRF        string
	Iterations int // PBKDF2 iterations, or Argon2 passes
	MemoryKiB  int // Argon2 only
	VeraCrypt  bool
	// Boot marks the counts used only for system encryption.
	Boot bool
	// Legacy counts come from TrueCrypt 4.x/5.x.
	Legacy bool
}

func (k kdfCandidate) argon2() bool { return k.PRF == "Argon2id" }

// veraCryptPIMIterations applies VeraCrypt's PIM rules to a PRF.
// Normal volumes: 15,000 + PIM×1,000; system encryption: PIM×2,048.
// Argon2id: PIM ≤ 31 gives (PIM−1)/3+3 passes over 64+(PIM−1)×32 MiB,
// larger PIMs give PIM−18 passes over 1 GiB.
func veraCryptPIMIterations(k kdfCandidate, pim int) kdfCandidate {
	if pim <= 0 {
		return k
	}
	switch {
	case k.argon2():
		if pim <= 31 {
			k.Iterations = (pim-1)/3 + 3
			k.MemoryKiB = 1024 * (64 + (pim-1)*32)
		} else {
			k.Iterations = pim - 18
			k.MemoryKiB = 1024 * 1024
		}
	case k.Boot:
		k.Iterations = pim * 2048
	default:
		k.Iterations = 15000 + pim*1000
	}
	return k
}

// allKDFs lists every header-key derivation the programs have used, in the
// order worth trying: the search (plan) runs them in this order, so it is
// chosen to make the expected time to the right key short, by likelihood
// over cost (one derivation's core-seconds, measured with `cryptvol
// benchmark kdf` on an AVX-512 machine, in brackets).
var allKDFs = []kdfCandidate{
	// TrueCrypt first: its iteration counts are so low (milliseconds)
	// that trying them costs nothing next to one VeraCrypt derivation.
	{PRF: "RIPEMD-160", Iterations: 2000},
	{PRF: "SHA-512", Iterations: 1000},
	{PRF: "Whirlpool", Iterations: 1000},
	{PRF: "RIPEMD-160", Iterations: 1000, Boot: true},
	{PRF: "SHA-1", Iterations: 2000, Legacy: true},
	// VeraCrypt: its default PRF, by far the most likely [0.6 s].
	{PRF: "SHA-512", Iterations: 500000, VeraCrypt: true},
	// The other PRFs VeraCrypt offers, cheapest first (when nothing says
	// one is likelier than another, the cheap ones first minimise the
	// expected time): SHA-256 [0.45 s], BLAKE2s [0.8 s], Whirlpool
	// [0.6 s with AVX-512 and GFNI, 1.4 s with table lookups], Streebog
	// [2.1 s, 5.7 s]. Whirlpool stays after BLAKE2s: only on CPUs with
	// GFNI is it the cheaper one, and then by little.
	{PRF: "SHA-256", Iterations: 500000, VeraCrypt: true},
	{PRF: "BLAKE2s-256", Iterations: 500000, VeraCrypt: true},
	{PRF: "Whirlpool", Iterations: 500000, VeraCrypt: true},
	{PRF: "Streebog", Iterations: 500000, VeraCrypt: true},
	// Argon2id (VeraCrypt 1.26.x on Windows) [1.4 s on one core: it has
	// one lane, so it runs beside the next derivation].
	{PRF: "Argon2id", Iterations: 6, MemoryKiB: 416 * 1024, VeraCrypt: true},
	// RIPEMD-160 left VeraCrypt in 1.26: only older volumes use it [2.5 s].
	{PRF: "RIPEMD-160", Iterations: 655331, VeraCrypt: true},
	// VeraCrypt system encryption (pre-boot authentication) counts.
	{PRF: "SHA-256", Iterations: 200000, VeraCrypt: true, Boot: true},
	{PRF: "BLAKE2s-256", Iterations: 200000, VeraCrypt: true, Boot: true},
	{PRF: "RIPEMD-160", Iterations: 327661, VeraCrypt: true, Boot: true},
}

// prfAliases maps accepted spellings of --hash to display names.
var prfAliases = map[string]string{
	"sha512": "SHA-512", "sha-512": "SHA-512",
	"sha256": "SHA-256", "sha-256": "SHA-256",
	"whirlpool": "Whirlpool", "wp512": "Whirlpool",
	"ripemd160": "RIPEMD-160", "ripemd-160": "RIPEMD-160", "rmd160": "RIPEMD-160",
	"sha1": "SHA-1", "sha-1": "SHA-1",
	"streebog": "Streebog", "stribog512": "Streebog", "streebog512": "Streebog", "streebog-512": "Streebog",
	"blake2s": "BLAKE2s-256", "blake2s-256": "BLAKE2s-256", "blake2s256": "BLAKE2s-256",
	"argon2id": "Argon2id", "argon2": "Argon2id",
}

// canonicalPRF returns the display name for a --hash value, or "".
func canonicalPRF(name string) string {
	return prfAliases[strings.ToLower(strings.TrimSpace(name))]
}

// selectKDFs filters allKDFs by the request: PRF hint, format, system
// encryption and PIM (a PIM rules out TrueCrypt, which has none).
func selectKDFs(prf string, wantVera, wantTrue, system bool, pim int) []kdfCandidate {
	var out []kdfCandidate
	for _, k := range allKDFs {
		if prf != "" && k.PRF != prf {
			continue
		}
		if k.VeraCrypt && !wantVera || !k.VeraCrypt && !wantTrue {
			continue
		}
		if pim > 0 && !k.VeraCrypt {
			continue
		}
		if k.Boot && !system {
			continue
		}
		if k.VeraCrypt {
			k = veraCryptPIMIterations(k, pim)
		}
		out = append(out, k)
	}
	if system {
		// System volumes mostly use the pre-boot counts: try them first.
		sort.SliceStable(out, func(i, j int) bool { return out[i].Boot && !out[j].Boot })
	}
	return out
}
