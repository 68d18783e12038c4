package adiantum

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestVectors checks every Adiantum vector of Linux's testmgr.h
// (adiantum_xchacha12_aes_tv_template and adiantum_xchacha20_aes_tv_template)
// in both directions, in place and not, on every NH path this CPU runs;
// the ChaCha and AES paths are this CPU's (GODEBUG masks choose others).
func TestVectors(t *testing.T) {
	vs := readRecords(t, "testdata/adiantum.txt", "ciphertext")
	if len(vs) != 12 {
		t.Fatalf("%d vectors, want testmgr.h's 6 XChaCha12 and 6 XChaCha20", len(vs))
	}
	t.Logf("implementation: %s", Implementation())
	for _, impl := range nhImpls() {
		withNH(impl, func() {
			for _, v := range vs {
				key, tweak := v.fields["key"], v.fields["tweak"]
				pt, ct := v.fields["plaintext"], v.fields["ciphertext"]
				c, err := New(key, v.rounds)
				if err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(pt))
				c.Encrypt(got, pt, tweak)
				if !bytes.Equal(got, ct) {
					t.Errorf("NH %s, %s (%d bytes): encrypt got %x, want %x", nhImplName(impl), v.name, len(pt), got, ct)
				}
				got = bytes.Clone(ct)
				c.Decrypt(got, got, tweak)
				if !bytes.Equal(got, pt) {
					t.Errorf("NH %s, %s: decrypt in place got %x, want %x", nhImplName(impl), v.name, got, pt)
				}
				if len(pt)%16 == 0 {
					got = bytes.Clone(pt)
					c.EncryptSectors(got, got, len(pt), tweak)
					if !bytes.Equal(got, ct) {
						t.Errorf("NH %s, %s: EncryptSectors differs", nhImplName(impl), v.name)
					}
				}
			}
		})
	}
}

// TestSectorsMatchMessages: a run of sectors (more than one batch, of
// both sector sizes dm-crypt uses most) encrypts as each sector alone.
func TestSectorsMatchMessages(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	for _, rounds := range []int{12, 20} {
		c, err := New(key, rounds)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{16, 512, 4096, 4112} {
			n := 2*batch + 3
			src := make([]byte, n*size)
			tweaks := make([]byte, n*TweakSize)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			for i := range tweaks {
				tweaks[i] = byte(rng.Uint32())
			}
			want := make([]byte, len(src))
			for i := 0; i < n; i++ {
				c.Encrypt(want[i*size:(i+1)*size], src[i*size:(i+1)*size], tweaks[i*TweakSize:(i+1)*TweakSize])
			}
			got := make([]byte, len(src))
			c.EncryptSectors(got, src, size, tweaks)
			if !bytes.Equal(got, want) {
				t.Fatalf("XChaCha%d, %d-byte sectors: EncryptSectors differs from one Encrypt per sector", rounds, size)
			}
			c.DecryptSectors(got, got, size, tweaks)
			if !bytes.Equal(got, src) {
				t.Fatalf("XChaCha%d, %d-byte sectors: no round trip", rounds, size)
			}
		}
	}
}

// TestWideBlock: Adiantum is a wide-block cipher, so a change to any byte
// of a sector, or to the tweak, changes every byte of the ciphertext
// (a 16-byte run of equal bytes would happen by chance with probability
// about 2^-128 per block).
func TestWideBlock(t *testing.T) {
	c, _ := New(bytes.Repeat([]byte{1}, KeySize), 12)
	pt := make([]byte, 4096)
	tweak := make([]byte, TweakSize)
	base := make([]byte, len(pt))
	c.Encrypt(base, pt, tweak)
	differsEverywhere := func(what string, ct []byte) {
		for i := 0; i < len(ct); i += 16 {
			if bytes.Equal(ct[i:i+16], base[i:i+16]) {
				t.Errorf("%s: ciphertext block %d unchanged", what, i/16)
			}
		}
	}
	for _, at := range []int{0, 2000, 4079, 4080, 4095} {
		p := bytes.Clone(pt)
		p[at] ^= 0x80
		ct := make([]byte, len(p))
		c.Encrypt(ct, p, tweak)
		differsEverywhere("plaintext byte "+itoa(at), ct)
	}
	tw := bytes.Clone(tweak)
	tw[31] = 1
	ct := make([]byte, len(pt))
	c.Encrypt(ct, pt, tw)
	differsEverywhere("tweak", ct)
}

func itoa(n int) string {
	return string(rune('0'+n/1000%10)) + string(rune('0'+n/100%10)) + string(rune('0'+n/10%10)) + string(rune('0'+n%10))
}

func TestBadInput(t *testing.T) {
	if _, err := New(make([]byte, 31), 12); err == nil {
		t.Error("31-byte key accepted")
	}
	if _, err := New(make([]byte, 32), 8); err == nil {
		t.Error("XChaCha8 accepted")
	}
	c, _ := New(make([]byte, 32), 12)
	mustPanic := func(what string, f func()) {
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", what)
			}
		}()
		f()
	}
	mustPanic("15-byte message", func() { c.Encrypt(make([]byte, 15), make([]byte, 15), make([]byte, 32)) })
	mustPanic("16-byte tweak", func() { c.Encrypt(make([]byte, 32), make([]byte, 32), make([]byte, 16)) })
	mustPanic("sector size 500", func() { c.EncryptSectors(make([]byte, 1000), make([]byte, 1000), 500, make([]byte, 64)) })
	mustPanic("tweaks short", func() { c.EncryptSectors(make([]byte, 1024), make([]byte, 1024), 512, make([]byte, 32)) })
}

// TestAllocs: sector encryption makes no allocation.
func TestAllocs(t *testing.T) {
	c, _ := New(make([]byte, 32), 12)
	buf := make([]byte, 16*4096)
	tweaks := make([]byte, 16*TweakSize)
	if n := testing.AllocsPerRun(20, func() { c.EncryptSectors(buf, buf, 4096, tweaks) }); n != 0 {
		t.Errorf("EncryptSectors: %v allocations", n)
	}
	if n := testing.AllocsPerRun(20, func() { c.Decrypt(buf[:100], buf[:100], tweaks[:32]) }); n != 0 {
		t.Errorf("Decrypt of an odd length: %v allocations", n)
	}
}
