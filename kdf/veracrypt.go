package kdf

import (
	"fmt"

	"github.com/cryptvol/cryptvol/hashes"
)

// TrueCrypt and VeraCrypt header-key derivation rules.
//
// Sources (checked against both):
//   - VeraCrypt src/Common/Pkcs5.c, get_pkcs5_iteration_count and
//     get_argon2_params (1.26.x; RIPEMD-160 and the TrueCrypt mode from
//     1.25.9, the last release that had them).
//   - cryptsetup lib/tcrypt/tcrypt.c, the tcrypt_kdf table and its PIM
//     handling (which lists the same constants).
//
// PBKDF2, normal volumes:   PIM 0 -> 500,000 (RIPEMD-160: 655,331);
//                           PIM > 0 -> 15,000 + 1,000 x PIM.
// PBKDF2, system (boot):    PIM 0 -> 200,000 (RIPEMD-160: 327,661);
//                           PIM > 0 -> 2,048 x PIM.
//   VeraCrypt applies the boot rule only to the PRFs its boot loaders
//   support (SHA-256, BLAKE2s-256, Streebog, RIPEMD-160); SHA-512 and
//   Whirlpool keep the normal rule even for system encryption.
// TrueCrypt (no PIM): RIPEMD-160 2,000 (1,000 for system encryption),
//   SHA-512 1,000, Whirlpool 1,000, SHA-1 2,000 (TrueCrypt 4.x/5.x).
//
// Argon2id (VeraCrypt 1.26.x get_argon2_params, parallelism always 1):
//   PIM 0 means PIM 12;
//   memory = min(64 + (PIM - 1) x 32, 1024) MiB;
//   passes = 3 + (PIM - 1) / 3 for PIM <= 31, 13 + (PIM - 31) above.
//   So PIM 12 -> 416 MiB, 6 passes (cryptsetup's default row: 425984 KiB,
//   6 iterations, 1 thread); PIM 8 -> 288 MiB, 5 passes; PIM 33 -> 1 GiB,
//   15 passes. Argon2 is never used for system encryption.

// VeraCrypt's key derivations in the order VeraCrypt tries them when
// mounting (the PRF enum of src/Common/Crypto.h: SHA-512, Whirlpool,
// SHA-256, BLAKE2s-256, Streebog, then Argon2), with RIPEMD-160, dropped in
// 1.26 but still needed for older volumes, tried after the PBKDF2 ones.
var veraCryptPRFs = []string{hashes.SHA512, hashes.Whirlpool, hashes.SHA256, hashes.BLAKE2s256, hashes.Streebog, hashes.RIPEMD160, Argon2idPRF}

// TrueCrypt's PRFs in TrueCrypt 7.1a's order, then SHA-1 (4.x/5.x).
var trueCryptPRFs = []string{hashes.RIPEMD160, hashes.SHA512, hashes.Whirlpool, hashes.SHA1}

// Argon2idPRF is the name under which VeraCrypt's Argon2id KDF appears in
// the PRF lists.
const Argon2idPRF = "Argon2id"

// VeraCryptPRFs returns the PRF names to try for a VeraCrypt volume, in
// VeraCrypt's order. For system encryption Argon2id is left out (VeraCrypt
// does not support it in pre-boot authentication).
func VeraCryptPRFs(system bool) []string {
	out := append([]string(nil), veraCryptPRFs...)
	if system {
		out = out[:len(out)-1]
	}
	return out
}

// TrueCryptPRFs returns the PRF names to try for a TrueCrypt volume.
func TrueCryptPRFs() []string { return append([]string(nil), trueCryptPRFs...) }

// VeraCryptIterations returns the PBKDF2 iteration count VeraCrypt uses for
// prf (a hashes name) with the given PIM (0 = default), for a normal volume
// or system encryption.
func VeraCryptIterations(prf string, pim int, system bool) (int, error) {
	if pim < 0 {
		return 0, fmt.Errorf("kdf: negative PIM %d", pim)
	}
	h, err := hashes.Lookup(prf)
	if err != nil {
		return 0, err
	}
	bootRule := false
	switch h.Name {
	case hashes.SHA512, hashes.Whirlpool:
	case hashes.SHA256, hashes.BLAKE2s256, hashes.Streebog:
		bootRule = system
	case hashes.RIPEMD160:
		bootRule = system
		if pim == 0 {
			if system {
				return 327661, nil
			}
			return 655331, nil
		}
	default:
		return 0, fmt.Errorf("kdf: %s is not a VeraCrypt PRF", h.Name)
	}
	switch {
	case bootRule && pim == 0:
		return 200000, nil
	case bootRule:
		return pim * 2048, nil
	case pim == 0:
		return 500000, nil
	}
	return 15000 + pim*1000, nil
}

// TrueCryptIterations returns TrueCrypt's fixed PBKDF2 iteration count.
func TrueCryptIterations(prf string, system bool) (int, error) {
	h, err := hashes.Lookup(prf)
	if err != nil {
		return 0, err
	}
	switch h.Name {
	case hashes.RIPEMD160:
		if system {
			return 1000, nil
		}
		return 2000, nil
	case hashes.SHA512, hashes.Whirlpool:
		return 1000, nil
	case hashes.SHA1:
		return 2000, nil
	}
	return 0, fmt.Errorf("kdf: %s is not a TrueCrypt PRF", h.Name)
}

// VeraCryptArgon2 returns VeraCrypt's Argon2id cost for a PIM (0 meaning
// VeraCrypt's default, 12): passes and memory in KiB (parallelism is 1).
func VeraCryptArgon2(pim int) (passes, memoryKiB uint32) {
	if pim <= 0 {
		pim = 12
	}
	mib := min(64+(pim-1)*32, 1024)
	if pim <= 31 {
		passes = uint32(3 + (pim-1)/3)
	} else {
		passes = uint32(13 + (pim - 31))
	}
	return passes, uint32(mib) * 1024
}

// VeraCryptParams returns the derivation VeraCrypt uses for one entry of
// VeraCryptPRFs and a PIM.
func VeraCryptParams(prf string, pim int, system bool) (Params, error) {
	if prf == Argon2idPRF {
		if system {
			return Params{}, fmt.Errorf("kdf: VeraCrypt does not use Argon2id for system encryption")
		}
		if pim < 0 {
			return Params{}, fmt.Errorf("kdf: negative PIM %d", pim)
		}
		t, m := VeraCryptArgon2(pim)
		return Params{Kind: KindArgon2id, Iterations: t, MemoryKiB: m, Parallelism: 1}, nil
	}
	n, err := VeraCryptIterations(prf, pim, system)
	if err != nil {
		return Params{}, err
	}
	return Params{Kind: KindPBKDF2, PRF: hashes.MustLookup(prf).Name, Iterations: uint32(n)}, nil
}

// TrueCryptParams returns the derivation TrueCrypt uses for prf.
func TrueCryptParams(prf string, system bool) (Params, error) {
	n, err := TrueCryptIterations(prf, system)
	if err != nil {
		return Params{}, err
	}
	return Params{Kind: KindPBKDF2, PRF: hashes.MustLookup(prf).Name, Iterations: uint32(n)}, nil
}
