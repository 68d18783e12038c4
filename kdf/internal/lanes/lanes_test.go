package lanes

import (
	"bytes"
	"crypto/hmac"
	stdpbkdf2 "crypto/pbkdf2"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"hash"
	"math/rand/v2"
	"testing"

	"golang.org/x/crypto/blake2s"
	xripemd "golang.org/x/crypto/ripemd160" //nolint:staticcheck // the reference, deprecated for new uses only
)

func newHash(h Hash) func() hash.Hash {
	switch h {
	case SHA512:
		return sha512.New
	case RIPEMD160:
		return xripemd.New // an independent implementation; ours is in the kernels' key set-up
	case BLAKE2s256:
		return func() hash.Hash {
			h, _ := blake2s.New256(nil)
			return h
		}
	}
	return sha256.New
}

var allHashes = []Hash{SHA256, SHA512, RIPEMD160, BLAKE2s256}

// pads returns the HMAC key blocks of key (RFC 2104).
func pads(h Hash, key []byte) (ipad, opad []byte) {
	if len(key) > h.BlockSize() {
		d := newHash(h)()
		d.Write(key)
		key = d.Sum(nil)
	}
	ipad, opad = make([]byte, h.BlockSize()), make([]byte, h.BlockSize())
	copy(ipad, key)
	copy(opad, key)
	for i := range ipad {
		ipad[i] ^= 0x36
		opad[i] ^= 0x5c
	}
	return ipad, opad
}

// deriveWith is PBKDF2-HMAC-h through kernel k: the output blocks fill
// groups of k.Lanes lanes placed from lane first of a State whose other
// lanes hold random junk, which must come out unchanged.
func deriveWith(t *testing.T, k *Kernel, rng *rand.Rand, pw, salt []byte, iter, keyLen, first int) []byte {
	t.Helper()
	h := k.Hash
	blocks := (keyLen + h.Size() - 1) / h.Size()
	out := make([]byte, 0, blocks*h.Size())
	ipad, opad := pads(h, pw)
	for b := 0; b < blocks; b += k.Lanes {
		var s State
		for i := range s.w {
			for j := range s.w[i] {
				for l := range s.w[i][j] {
					s.w[i][j][l] = rng.Uint64()
				}
			}
		}
		junk := s
		n := min(k.Lanes, blocks-b)
		for l := 0; l < n; l++ {
			m := hmac.New(newHash(h), pw)
			m.Write(salt)
			m.Write(binary.BigEndian.AppendUint32(nil, uint32(b+l+1)))
			s.SetKey(h, first+l, ipad, opad)
			s.SetU(h, first+l, m.Sum(nil))
		}
		k.Run(&s, first, iter-1)
		for l := 0; l < n; l++ {
			out = out[:len(out)+h.Size()]
			s.Sum(h, first+l, out[len(out)-h.Size():])
		}
		// Lanes outside [first, first+k.Lanes) are untouched.
		for l := 0; l < h.MaxLanes(); l++ {
			if l >= first && l < first+k.Lanes {
				continue
			}
			for sec := range 4 {
				for j := range 8 {
					if s.get(h, sec, j, l) != junk.get(h, sec, j, l) {
						t.Fatalf("%s: lane %d (section %d row %d) changed", k.Name, l, sec, j)
					}
				}
			}
		}
	}
	return out[:keyLen]
}

// TestKernelsAgainstCryptoPBKDF2 runs every kernel this CPU has (and the
// generic one) against crypto/pbkdf2 on random passwords (some longer
// than a block), salts, iteration counts and key lengths, so that groups
// come out full and partly filled, at every lane offset.
func TestKernelsAgainstCryptoPBKDF2(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for _, h := range allHashes {
		for _, k := range Available(h) {
			t.Run(h.String()+"/"+k.Name, func(t *testing.T) {
				for first := 0; first+k.Lanes <= h.MaxLanes(); first++ {
					for trial := 0; trial < 3; trial++ {
						pw := rnd(rng.IntN(2*h.BlockSize() + 2))
						salt := rnd(rng.IntN(70))
						iter := 1 + rng.IntN(50)
						// up to two groups' worth of blocks
						keyLen := 1 + rng.IntN(2*k.Lanes*h.Size())
						want, err := stdpbkdf2.Key(newHash(h), string(pw), salt, iter, keyLen)
						if err != nil {
							t.Fatal(err)
						}
						got := deriveWith(t, k, rng, pw, salt, iter, keyLen, first)
						if !bytes.Equal(got, want) {
							t.Fatalf("lane %d: pw %d bytes, salt %d, %d iterations, %d-byte key:\n got %x\nwant %x",
								first, len(pw), len(salt), iter, keyLen, got, want)
						}
					}
				}
			})
		}
	}
}

// TestKernelsResume: n iterations in one call equal the same n split over
// several calls (the caller checks its context between calls).
func TestKernelsResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, h := range allHashes {
		for _, k := range Available(h) {
			var a State
			for l := 0; l < k.Lanes; l++ {
				ipad, opad := pads(h, []byte{byte(l), 1, 2})
				a.SetKey(h, l, ipad, opad)
				u := make([]byte, h.Size())
				for i := range u {
					u[i] = byte(rng.Uint32())
				}
				a.SetU(h, l, u)
			}
			b := a
			k.Run(&a, 0, 1000)
			for _, n := range []int{1, 2, 997} {
				k.Run(&b, 0, n)
			}
			if a != b {
				t.Errorf("%v %s: 1000 iterations differ from 1+2+997", h, k.Name)
			}
		}
	}
}

// TestConstants spot-checks the computed tables against FIPS 180-4.
func TestConstants(t *testing.T) {
	if k512[0] != 0x428a2f98d728ae22 || k512[79] != 0x6c44198c4a475817 ||
		k256[0] != 0x428a2f98 || k256[63] != 0xc67178f2 ||
		iv512 != [8]uint64{0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
			0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179} ||
		iv256 != [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {
		t.Fatal("SHA-2 constants differ from FIPS 180-4")
	}
}
