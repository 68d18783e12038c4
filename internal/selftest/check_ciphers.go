package selftest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
)

// batchCopies is how many copies of a vector's plaintext the ECB batch
// check encrypts in one call: enough to fill the widest SIMD kernels (16
// blocks per register with AVX-512, several registers per loop).
const batchCopies = 64

// checkBlockCipher encrypts and decrypts an ECB vector through the cipher
// registry, once as given and once as a batch of copies.
func checkBlockCipher(_ context.Context, v, _ record) error {
	name, err := v.text("cipher")
	if err != nil {
		return err
	}
	key, err := v.bytes("key")
	if err != nil {
		return err
	}
	pt, err := v.bytes("pt")
	if err != nil {
		return err
	}
	ct, err := v.bytes("ct")
	if err != nil {
		return err
	}
	if v.get("swap") == "32" {
		pt, ct = swap32(pt), swap32(ct)
	}
	b, err := ciphers.New(name, key)
	if err != nil {
		return err
	}
	if len(pt) == 0 || len(pt)%b.BlockSize() != 0 || len(ct) != len(pt) {
		return fmt.Errorf("plaintext of %d and ciphertext of %d bytes for a %d-byte block", len(pt), len(ct), b.BlockSize())
	}
	got := make([]byte, len(pt))
	b.EncryptBlocks(got, pt)
	if !bytes.Equal(got, ct) {
		return mismatch("encryption", got, ct)
	}
	b.DecryptBlocks(got, got)
	if !bytes.Equal(got, pt) {
		return mismatch("decryption", got, pt)
	}
	batchPT := bytes.Repeat(pt, batchCopies)
	batchCT := bytes.Repeat(ct, batchCopies)
	batch := make([]byte, len(batchPT))
	b.EncryptBlocks(batch, batchPT)
	if !bytes.Equal(batch, batchCT) {
		return mismatch(fmt.Sprintf("%d-copy batch encryption", batchCopies), batch, batchCT)
	}
	b.DecryptBlocks(batch, batch)
	if !bytes.Equal(batch, batchPT) {
		return mismatch(fmt.Sprintf("%d-copy batch decryption", batchCopies), batch, batchPT)
	}
	return nil
}

// swap32 reverses the bytes of each 32-bit word: it turns a standard
// (big-endian) Blowfish block into TrueCrypt's little-endian layout.
func swap32(b []byte) []byte {
	out := make([]byte, len(b))
	for i := 0; i+4 <= len(b); i += 4 {
		binary.LittleEndian.PutUint32(out[i:], binary.BigEndian.Uint32(b[i:]))
	}
	return out
}

// cascadeUnit and cascadeUnits are the data unit size and count of
// VeraCrypt's test buffer, and firstMovingUnit the data unit that moves
// through it.
const (
	cascadeUnit            = 512
	cascadeUnits           = 4
	firstMovingUnit uint64 = 0xFFFFFFFFFF
)

// checkCascade reproduces VeraCrypt's TestSectorBufEncryption for one
// chain (see testdata/cascades.txt).
func checkCascade(_ context.Context, v, setup record) error {
	if setup.fields == nil {
		return fmt.Errorf("no setup record before the chain records")
	}
	name, err := v.text("chain")
	if err != nil {
		return err
	}
	c, err := ciphers.LookupChain(name)
	if err != nil {
		return err
	}
	half, err := c.KeySize()
	if err != nil {
		return err
	}
	key1, err := setup.bytes("key1")
	if err != nil {
		return err
	}
	key2, err := setup.bytes("key2")
	if err != nil {
		return err
	}
	if len(key1) < half || len(key2) < half {
		return fmt.Errorf("%s needs %d bytes of key1 and key2, have %d and %d", name, half, len(key1), len(key2))
	}
	unit, err := setup.bytes("pt")
	if err != nil {
		return err
	}
	if len(unit) != cascadeUnit {
		return fmt.Errorf("plaintext unit of %d bytes, want %d", len(unit), cascadeUnit)
	}
	plainCRC, err := crcField(setup, "plain_crc")
	if err != nil {
		return err
	}
	unitCRCs, err := crcList(v, "crc_units", cascadeUnits)
	if err != nil {
		return err
	}
	bufferCRC, err := crcField(v, "crc_buffer")
	if err != nil {
		return err
	}
	var aesUnit []byte
	if c.Name == "AES" {
		if aesUnit, err = setup.bytes("aes_unit_ct"); err != nil {
			return err
		}
	}
	key := append(append([]byte{}, key1[:half]...), key2[:half]...)
	defer clear(key)
	m, err := sector.ChainXTS(c, key, cascadeUnit)
	if err != nil {
		return err
	}
	plain := bytes.Repeat(unit, cascadeUnits)
	if got := crc32.ChecksumIEEE(plain); got != plainCRC {
		return fmt.Errorf("plaintext CRC %08x, want %08x: the setup record is wrong", got, plainCRC)
	}
	buf := make([]byte, len(plain))
	// VeraCrypt's test cases 0..3 (data units), then the header buffer.
	for k := 0; k <= cascadeUnits; k++ {
		first, want, what := firstMovingUnit-uint64(k), uint32(0), ""
		if k < cascadeUnits {
			want, what = unitCRCs[k], fmt.Sprintf("data units from %#x", first)
		} else {
			first, want, what = 0, bufferCRC, "header buffer (data units from 0)"
		}
		copy(buf, plain)
		m.Encrypt(buf, buf, first)
		if got := crc32.ChecksumIEEE(buf); got != want {
			return fmt.Errorf("%s: ciphertext CRC-32 %08x, want %08x", what, got, want)
		}
		if aesUnit != nil && k < cascadeUnits {
			if got := buf[k*cascadeUnit : (k+1)*cascadeUnit]; !bytes.Equal(got, aesUnit) {
				return mismatch(fmt.Sprintf("data unit %#x (IEEE 1619 vector 14)", firstMovingUnit), got, aesUnit)
			}
		}
		m.Decrypt(buf, buf, first)
		if got := crc32.ChecksumIEEE(buf); got != plainCRC {
			return fmt.Errorf("%s: decryption CRC-32 %08x, want %08x", what, got, plainCRC)
		}
	}
	return nil
}

func crcField(r record, k string) (uint32, error) {
	b, err := r.bytes(k)
	if err != nil {
		return 0, err
	}
	if len(b) != 4 {
		return 0, fmt.Errorf("field %q: CRC of %d bytes", k, len(b))
	}
	return binary.BigEndian.Uint32(b), nil
}

func crcList(r record, k string, n int) ([]uint32, error) {
	v, err := r.text(k)
	if err != nil {
		return nil, err
	}
	parts := strings.Fields(v)
	if len(parts) != n {
		return nil, fmt.Errorf("field %q: %d CRCs, want %d", k, len(parts), n)
	}
	out := make([]uint32, n)
	for i, p := range parts {
		c, err := crcField(record{fields: map[string]string{k: p}}, k)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}
