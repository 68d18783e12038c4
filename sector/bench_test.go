package sector

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"testing"

	xcxts "golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/ciphers/adiantum"
)

// Benchmarks use the crypto/aes adapter of adapter_test.go, which calls the
// standard library once per 16-byte block; the real ciphers/aes kernels are
// faster, so the identity-cipher benchmarks show the sector layer's own
// ceiling. Reference figures for the same work are measured beside them.

// identity is a cipher that does nothing, to measure the mode's own cost.
type identity struct{}

func (identity) BlockSize() int                { return 16 }
func (identity) EncryptBlocks(dst, src []byte) { copy(dst, src) }
func (identity) DecryptBlocks(dst, src []byte) { copy(dst, src) }

func benchMode(b *testing.B, m Mode, size int, decrypt bool) {
	buf := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if decrypt {
			m.Decrypt(buf, buf, uint64(i))
		} else {
			m.Encrypt(buf, buf, uint64(i))
		}
	}
}

func dirs(b *testing.B, m Mode, size int) {
	b.Run("encrypt", func(b *testing.B) { benchMode(b, m, size, false) })
	b.Run("decrypt", func(b *testing.B) { benchMode(b, m, size, true) })
}

func BenchmarkXTS(b *testing.B) {
	key := make([]byte, 64)
	m, err := NewXTS(newAES(b, key[:32]), newAES(b, key[32:]), 512)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("AES-256/4KiB", func(b *testing.B) { dirs(b, m, 4<<10) })
	// Reference: x/crypto/xts over the same 8 sectors of 512 bytes.
	b.Run("AES-256/4KiB/ref-x-crypto-xts", func(b *testing.B) {
		c, _ := xcxts.NewCipher(aes.NewCipher, key)
		buf := make([]byte, 4<<10)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for s := 0; s < len(buf); s += 512 {
				c.Encrypt(buf[s:s+512], buf[s:s+512], uint64(i*8+s/512))
			}
		}
	})
	for _, size := range []int{1 << 20, 5 << 20} {
		for _, w := range []int{1, 2} {
			p := Parallel(m, w)
			b.Run(fmt.Sprintf("AES-256/%dMiB/Parallel%d", size>>20, w), func(b *testing.B) { dirs(b, p, size) })
		}
	}
	id, _ := NewXTS(identity{}, identity{}, 512)
	b.Run("identity/64KiB", func(b *testing.B) { dirs(b, id, 64<<10) })
	b.Run("identity/1MiB/Parallel2", func(b *testing.B) { dirs(b, Parallel(id, 2), 1<<20) })
}

func BenchmarkCBCESSIV(b *testing.B) {
	key := make([]byte, 32)
	essiv, err := ESSIV(newAESBlock, sha256.New(), key)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewCBC(newAES(b, key), essiv, 512)
	if err != nil {
		b.Fatal(err)
	}
	const size = 64 << 10
	b.Run("AES-256/64KiB", func(b *testing.B) { dirs(b, m, size) })
	// Reference: crypto/cipher's CBC (with its AES-NI multi-block paths)
	// per sector, IVs from crypto/aes directly.
	salt := sha256.Sum256(key)
	essivRef, _ := aes.NewCipher(salt[:])
	blk, _ := aes.NewCipher(key)
	ref := func(b *testing.B, decrypt bool) {
		buf := make([]byte, size)
		iv := make([]byte, 16)
		var mode cipher.BlockMode
		if decrypt {
			mode = cipher.NewCBCDecrypter(blk, iv)
		} else {
			mode = cipher.NewCBCEncrypter(blk, iv)
		}
		setIV := mode.(interface{ SetIV([]byte) })
		b.SetBytes(size)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for s := 0; s < size; s += 512 {
				clear(iv)
				binary.LittleEndian.PutUint64(iv, uint64(i*128+s/512))
				essivRef.Encrypt(iv, iv)
				setIV.SetIV(iv)
				mode.CryptBlocks(buf[s:s+512], buf[s:s+512])
			}
		}
	}
	b.Run("AES-256/64KiB/ref-stdlib-cbc/encrypt", func(b *testing.B) { ref(b, false) })
	b.Run("AES-256/64KiB/ref-stdlib-cbc/decrypt", func(b *testing.B) { ref(b, true) })
	id, _ := NewCBC(identity{}, IVPlain64, 512)
	b.Run("identity/64KiB", func(b *testing.B) { dirs(b, id, size) })
}

func BenchmarkLRW(b *testing.B) {
	key := make([]byte, 48)
	m, err := NewLRW(newAES(b, key[:32]), key[32:], IVBenbi, 512)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("AES-256/64KiB", func(b *testing.B) { dirs(b, m, 64<<10) })
	id, _ := NewLRW(identity{}, key[32:], IVBenbi, 512)
	b.Run("identity/64KiB", func(b *testing.B) { dirs(b, id, 64<<10) })
}

func BenchmarkCascade(b *testing.B) {
	key := make([]byte, 128)
	a, _ := NewXTS(newAES(b, key[:32]), newAES(b, key[32:64]), 512)
	tf, _ := NewXTS(newTwofish(b, key[64:96]), newTwofish(b, key[96:]), 512)
	c := Cascade(tf, a)
	b.Run("AES-Twofish/1MiB", func(b *testing.B) { dirs(b, c, 1<<20) })
	b.Run("AES-Twofish/1MiB/Parallel2", func(b *testing.B) { dirs(b, Parallel(c, 2), 1<<20) })
}

// BenchmarkAdiantum runs the Adiantum sector mode (the real ciphers/aes
// and this CPU's ChaCha and NH kernels) over 64 KiB of 4096-byte sectors
// on one goroutine and over 1 MiB through Parallel.
func BenchmarkAdiantum(b *testing.B) {
	for _, rounds := range []int{12, 20} {
		c, err := adiantum.New(make([]byte, adiantum.KeySize), rounds)
		if err != nil {
			b.Fatal(err)
		}
		m, _ := NewAdiantum(c, IVPlain64, 4096)
		b.Run(fmt.Sprintf("XChaCha%d/64KiB", rounds), func(b *testing.B) { dirs(b, m, 64<<10) })
		b.Run(fmt.Sprintf("XChaCha%d/1MiB-parallel", rounds), func(b *testing.B) { dirs(b, Parallel(m, 0), 1<<20) })
	}
}
