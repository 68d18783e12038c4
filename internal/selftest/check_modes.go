package selftest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
)

func newAES(key []byte) (ciphers.Block, error) { return ciphers.New("AES", key) }

// roundTrip encrypts pt as one run from sector first, compares with ct,
// and decrypts back in place.
func roundTrip(m sector.Mode, pt, ct []byte, first uint64) error {
	if len(ct) != len(pt) {
		return fmt.Errorf("plaintext of %d and ciphertext of %d bytes", len(pt), len(ct))
	}
	got := make([]byte, len(pt))
	m.Encrypt(got, pt, first)
	if !bytes.Equal(got, ct) {
		return mismatch("encryption", got, ct)
	}
	m.Decrypt(got, got, first)
	if !bytes.Equal(got, pt) {
		return mismatch("decryption", got, pt)
	}
	return nil
}

// vectorTexts decodes the usual key, pt and ct fields.
func vectorTexts(v record) (key, pt, ct []byte, err error) {
	if key, err = v.bytes("key"); err != nil {
		return
	}
	if pt, err = v.bytes("pt"); err != nil {
		return
	}
	ct, err = v.bytes("ct")
	return
}

// checkXTS runs an IEEE 1619 vector: key is Key1 || Key2, the plaintext is
// one data unit.
func checkXTS(_ context.Context, v, _ record) error {
	key, pt, ct, err := vectorTexts(v)
	if err != nil {
		return err
	}
	sec, err := v.text("sector")
	if err != nil {
		return err
	}
	first, err := strconv.ParseUint(sec, 16, 64)
	if err != nil {
		return fmt.Errorf("field \"sector\": %v", err)
	}
	if len(key)%2 != 0 {
		return fmt.Errorf("odd XTS key length %d", len(key))
	}
	k1, err := newAES(key[:len(key)/2])
	if err != nil {
		return err
	}
	k2, err := newAES(key[len(key)/2:])
	if err != nil {
		return err
	}
	m, err := sector.NewXTS(k1, k2, len(pt))
	if err != nil {
		return err
	}
	return roundTrip(m, pt, ct, first)
}

// checkESSIV runs a kernel essiv(cbc(aes),sha256) vector as dm-crypt's
// cbc-essiv:sha256: the first 8 bytes of iv are the sector number.
func checkESSIV(_ context.Context, v, _ record) error {
	key, pt, ct, err := vectorTexts(v)
	if err != nil {
		return err
	}
	iv, err := v.bytes("iv")
	if err != nil {
		return err
	}
	if len(iv) != 16 || binary.LittleEndian.Uint64(iv[8:]) != 0 {
		return fmt.Errorf("iv %x is not a 64-bit sector number", iv)
	}
	gen, err := sector.ESSIV(newAES, sha256.New(), key)
	if err != nil {
		return err
	}
	b, err := newAES(key)
	if err != nil {
		return err
	}
	m, err := sector.NewCBC(b, gen, len(pt))
	if err != nil {
		return err
	}
	return roundTrip(m, pt, ct, binary.LittleEndian.Uint64(iv))
}

// checkLRW runs an LRW-AES vector: key is the AES key then the 16-byte
// tweak key; iv is the big-endian index of the first block, which
// plain64be makes from the sector number.
func checkLRW(_ context.Context, v, _ record) error {
	key, pt, ct, err := vectorTexts(v)
	if err != nil {
		return err
	}
	iv, err := v.bytes("iv")
	if err != nil {
		return err
	}
	if len(iv) != 16 || binary.BigEndian.Uint64(iv) != 0 {
		return fmt.Errorf("iv %x is not a 64-bit block index", iv)
	}
	if len(key) <= 16 {
		return fmt.Errorf("LRW key of %d bytes", len(key))
	}
	b, err := newAES(key[:len(key)-16])
	if err != nil {
		return err
	}
	m, err := sector.NewLRW(b, key[len(key)-16:], sector.IVPlain64BE, len(pt))
	if err != nil {
		return err
	}
	return roundTrip(m, pt, ct, binary.BigEndian.Uint64(iv[8:]))
}
