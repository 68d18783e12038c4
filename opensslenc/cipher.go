package opensslenc

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/aes"
	"github.com/cryptvol/cryptvol/ciphers/camellia"
	"github.com/cryptvol/cryptvol/ciphers/legacy"
)

// Mode is how a cipher turns its key and IV into a stream of ciphertext.
type Mode int

// The modes `openssl enc` offers for the ciphers of this package.
const (
	ModeCBC    Mode = iota + 1 // cipher block chaining, PKCS#7 padding
	ModeECB                    // each block alone, PKCS#7 padding; leaks patterns
	ModeCTR                    // 128-bit big-endian counter
	ModeCFB                    // full-block cipher feedback
	ModeCFB8                   // 8-bit cipher feedback
	ModeOFB                    // output feedback
	ModeStream                 // a stream cipher: ChaCha20, RC4
)

// Cipher is one cipher as `openssl enc` names it.
type Cipher struct {
	// Name is OpenSSL's name, e.g. "aes-256-cbc".
	Name string
	// KeySize and IVSize are in bytes, as EVP_CIPHER_key_length and
	// EVP_CIPHER_iv_length report them; IVSize is 0 for ECB and RC4.
	KeySize, IVSize int
	// BlockSize is the underlying block cipher's block size (8 or 16), or
	// 1 for ChaCha20 and RC4.
	BlockSize int
	Mode      Mode
	// Weak ciphers and modes are kept to decrypt old files; encrypting
	// with them deserves a warning.
	Weak bool
	// Legacy ciphers need OpenSSL 3's legacy provider
	// (`openssl enc -provider legacy -provider default ...`).
	Legacy bool

	newBlock  func(key []byte) (ciphers.Block, error)
	newStream func(key, iv []byte) (transform, error)
}

// Padded reports whether the mode pads to whole blocks (CBC and ECB).
func (c *Cipher) Padded() bool { return c.Mode == ModeCBC || c.Mode == ModeECB }

// String returns the OpenSSL name.
func (c *Cipher) String() string { return c.Name }

var (
	cipherTable []*Cipher
	cipherIndex = map[string]*Cipher{}
)

func addCipher(c *Cipher, aliases ...string) {
	cipherTable = append(cipherTable, c)
	for _, n := range append([]string{c.Name}, aliases...) {
		if _, dup := cipherIndex[n]; dup {
			panic("opensslenc: duplicate cipher name " + n)
		}
		cipherIndex[n] = c
	}
}

// blockModes adds name-MODE for each mode, e.g. "aes-128-cbc", with the
// key size and block size of the block cipher that newBlock makes.
func blockModes(name string, keySize, blockSize int, legacyProvider, weakCipher bool,
	newBlock func([]byte) (ciphers.Block, error), modes ...Mode) {
	suffix := map[Mode]string{ModeCBC: "cbc", ModeECB: "ecb", ModeCTR: "ctr", ModeCFB: "cfb", ModeCFB8: "cfb8", ModeOFB: "ofb"}
	for _, m := range modes {
		c := &Cipher{
			Name:      name + "-" + suffix[m],
			KeySize:   keySize,
			IVSize:    blockSize,
			BlockSize: blockSize,
			Mode:      m,
			Weak:      weakCipher || m == ModeECB,
			Legacy:    legacyProvider,
			newBlock:  newBlock,
		}
		if m == ModeECB {
			c.IVSize = 0
		}
		addCipher(c)
	}
}

func init() {
	newAES := func(key []byte) (ciphers.Block, error) { return aes.New(key) }
	newCamellia := func(key []byte) (ciphers.Block, error) { return camellia.New(key) }
	all := []Mode{ModeCBC, ModeECB, ModeCTR, ModeCFB, ModeCFB8, ModeOFB}
	for _, bits := range []string{"128", "192", "256"} {
		n := map[string]int{"128": 16, "192": 24, "256": 32}[bits]
		blockModes("aes-"+bits, n, 16, false, false, newAES, all...)
		blockModes("camellia-"+bits, n, 16, false, false, newCamellia, all...)
		cipherIndex["aes"+bits] = cipherIndex["aes-"+bits+"-cbc"]
		cipherIndex["camellia"+bits] = cipherIndex["camellia-"+bits+"-cbc"]
	}

	newTripleDES := func(key []byte) (ciphers.Block, error) { return legacy.NewTripleDES(key) }
	blockModes("des-ede3", 24, 8, true, true, newTripleDES, ModeCBC, ModeECB, ModeCFB, ModeCFB8, ModeOFB)
	cipherIndex["des-ede3"] = cipherIndex["des-ede3-ecb"] // OpenSSL's bare name is ECB
	cipherIndex["des3"] = cipherIndex["des-ede3-cbc"]
	// Two-key Triple DES is K1, K2, K1; single DES is EDE with one key
	// three times, which the Triple DES code computes exactly.
	newTwoKey := func(key []byte) (ciphers.Block, error) {
		k := make([]byte, 0, 24)
		k = append(append(k, key...), key[:8]...)
		defer clear(k)
		return legacy.NewTripleDES(k)
	}
	blockModes("des-ede", 16, 8, true, true, newTwoKey, ModeCBC, ModeECB)
	cipherIndex["des-ede"] = cipherIndex["des-ede-ecb"]
	newDES := func(key []byte) (ciphers.Block, error) {
		k := make([]byte, 0, 24)
		k = append(append(append(k, key...), key...), key...)
		defer clear(k)
		return legacy.NewTripleDES(k)
	}
	blockModes("des", 8, 8, true, true, newDES, ModeCBC, ModeECB, ModeCFB, ModeOFB)
	cipherIndex["des"] = cipherIndex["des-cbc"]

	newBlowfish := func(key []byte) (ciphers.Block, error) { return legacy.NewBlowfishBE(key) }
	blockModes("bf", 16, 8, true, true, newBlowfish, ModeCBC, ModeECB, ModeCFB, ModeOFB)
	cipherIndex["bf"] = cipherIndex["bf-cbc"]
	cipherIndex["blowfish"] = cipherIndex["bf-cbc"]

	addCipher(&Cipher{Name: "chacha20", KeySize: 32, IVSize: 16, BlockSize: 1, Mode: ModeStream, newStream: newChaCha20})
	addCipher(&Cipher{Name: "rc4", KeySize: 16, BlockSize: 1, Mode: ModeStream, Weak: true, Legacy: true, newStream: newRC4})
}

// LookupCipher finds a cipher by OpenSSL's name or alias ("aes-256-cbc",
// "aes256", "des3", "bf", ...), ignoring case.
func LookupCipher(name string) (*Cipher, error) {
	c, ok := cipherIndex[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownCipher, name)
	}
	return c, nil
}

// Ciphers lists every cipher by its OpenSSL name, sorted.
func Ciphers() []*Cipher {
	out := append([]*Cipher(nil), cipherTable...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// CipherNames lists every accepted spelling, aliases included, sorted.
func CipherNames() []string {
	out := make([]string, 0, len(cipherIndex))
	for n := range cipherIndex {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
