package sector

import (
	"crypto/sha256"
	"math/rand/v2"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers/adiantum"
)

// TestNoAllocations checks that the hot paths allocate nothing once their
// scratch buffers exist.
func TestNoAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	if testing.Short() {
		t.Skip("short")
	}
	key := make([]byte, 64)
	k1, k2 := newAES(t, key[:32]), newAES(t, key[32:])
	fused, _ := withFused(k1)
	xtsGeneric, _ := NewXTS(k1, k2, 512)
	xtsFused, _ := NewXTS(fused, k2, 512)
	essiv, _ := ESSIV(newAESBlock, sha256.New(), key[:32])
	cbcESSIV, _ := NewCBC(k1, essiv, 512)
	lrw, _ := NewLRW(k1, key[:16], IVBenbi, 512)
	ecb, _ := NewECB(k1, 512)
	_, tf := xtsModes(t, rand.New(rand.NewPCG(1, 1)), 512)
	ad, _ := adiantum.New(key[:32], 12)
	adiantumMode, _ := NewAdiantum(ad, IVPlain64, 4096)
	cases := map[string]struct {
		m    Mode
		size int
	}{
		"xts":               {xtsGeneric, 256 << 10},
		"xts-fused":         {xtsFused, 256 << 10},
		"cbc-essiv":         {cbcESSIV, 256 << 10},
		"lrw-benbi":         {lrw, 256 << 10},
		"ecb":               {ecb, 64 << 10},
		"cascade":           {Cascade(tf, xtsGeneric), 256 << 10},
		"parallel-2":        {Parallel(xtsGeneric, 2), 1 << 20},
		"parallel-cbc":      {Parallel(cbcESSIV, 2), 1 << 20},
		"adiantum":          {adiantumMode, 256 << 10},
		"parallel-adiantum": {Parallel(adiantumMode, 2), 1 << 20},
	}
	for name, c := range cases {
		src := make([]byte, c.size)
		dst := make([]byte, c.size)
		for _, dir := range []struct {
			name string
			f    func()
		}{
			{"encrypt", func() { c.m.Encrypt(dst, src, 1<<33) }},
			{"decrypt", func() { c.m.Decrypt(dst, src, 1<<33) }},
			{"decrypt-in-place", func() { c.m.Decrypt(dst, dst, 1<<33) }},
		} {
			if n := testing.AllocsPerRun(20, dir.f); n != 0 {
				t.Errorf("%s %s: %v allocations per call", name, dir.name, n)
			}
		}
	}
}
