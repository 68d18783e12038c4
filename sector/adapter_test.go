package sector

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"encoding/hex"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
	"golang.org/x/crypto/twofish"
)

// The ciphers/* packages are written in parallel with this one, so the
// tests wrap the standard library's crypto/aes and x/crypto/twofish into
// ciphers.Block here.

// stdBlock adapts a one-block-per-call cipher.Block to ciphers.Block.
type stdBlock struct{ b cipher.Block }

func (s stdBlock) BlockSize() int { return s.b.BlockSize() }

func (s stdBlock) EncryptBlocks(dst, src []byte) {
	bs := s.b.BlockSize()
	for i := 0; i+bs <= len(src); i += bs {
		s.b.Encrypt(dst[i:i+bs], src[i:i+bs])
	}
}

func (s stdBlock) DecryptBlocks(dst, src []byte) {
	bs := s.b.BlockSize()
	for i := 0; i+bs <= len(src); i += bs {
		s.b.Decrypt(dst[i:i+bs], src[i:i+bs])
	}
}

// fusedXTS adds a deliberately naive ciphers.XTSBlock kernel to a 16-byte
// cipher, written byte by byte after IEEE 1619 section 5.3, so the tests can
// drive the sector layer's fused path and check what it hands the kernel.
type fusedXTS struct {
	stdBlock
	calls *atomic.Int64
}

func (f fusedXTS) EncryptXTS(dst, src, tweaks []byte, sectorSize int) {
	f.xts(dst, src, tweaks, sectorSize, false)
}

func (f fusedXTS) DecryptXTS(dst, src, tweaks []byte, sectorSize int) {
	f.xts(dst, src, tweaks, sectorSize, true)
}

func (f fusedXTS) xts(dst, src, tweaks []byte, sectorSize int, decrypt bool) {
	f.calls.Add(1)
	if len(tweaks)%16 != 0 || len(src) != len(tweaks)/16*sectorSize {
		panic("fusedXTS: tweaks do not match the data")
	}
	for i := 0; i < len(tweaks)/16; i++ {
		var t [16]byte
		copy(t[:], tweaks[16*i:])
		for j := 0; j < sectorSize; j += 16 {
			o := i*sectorSize + j
			x := dst[o : o+16]
			for k := range x {
				x[k] = src[o+k] ^ t[k]
			}
			if decrypt {
				f.b.Decrypt(x, x)
			} else {
				f.b.Encrypt(x, x)
			}
			for k := range x {
				x[k] ^= t[k]
			}
			refMulAlpha(&t)
		}
	}
}

// refMulAlpha multiplies an XTS tweak by α the way IEEE 1619 spells it out:
// shift each byte left with the carry from the byte before, then fold the
// bit carried out of byte 15 into byte 0 as 0x87.
func refMulAlpha(t *[16]byte) {
	var carry byte
	for k := range t {
		next := t[k] >> 7
		t[k] = t[k]<<1 | carry
		carry = next
	}
	if carry != 0 {
		t[0] ^= 0x87
	}
}

func newAES(t testing.TB, key []byte) stdBlock {
	t.Helper()
	b, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	return stdBlock{b}
}

func newTwofish(t testing.TB, key []byte) stdBlock {
	t.Helper()
	b, err := twofish.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	return stdBlock{b}
}

// newAESBlock is a ciphers.Spec-style constructor for ESSIV.
func newAESBlock(key []byte) (ciphers.Block, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return stdBlock{b}, nil
}

// withFused returns b as a ciphers.XTSBlock and a counter of fused calls.
func withFused(b stdBlock) (fusedXTS, *atomic.Int64) {
	n := new(atomic.Int64)
	return fusedXTS{stdBlock: b, calls: n}, n
}

// readVectors parses a testdata file of "Name = value" lines in records
// separated by blank lines; '#' starts a comment line.
func readVectors(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]string
	cur := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "#"):
		case line == "":
			if len(cur) > 0 {
				out = append(out, cur)
				cur = map[string]string{}
			}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: bad line %q", path, line)
			}
			cur[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no vectors", path)
	}
	return out
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func mustDES3(t testing.TB) cipher.Block {
	t.Helper()
	b, err := des.NewTripleDESCipher(make([]byte, 24))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
