package fvault2

import (
	"crypto/aes"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// FileVault 2 wraps its keys with the AES key wrap of RFC 3394 (NIST SP
// 800-38F's KW): the integrity check value A6A6A6A6A6A6A6A6 tells a right
// key-encryption key from a wrong one.

var errUnwrap = errors.New("AES key unwrap: integrity check failed (wrong key)")

var defaultIV = [8]byte{0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6, 0xa6}

// unwrapKey undoes RFC 3394 section 2.2.2 for a wrapped key of n+1 64-bit
// blocks (n >= 2) and returns the n-block key.
func unwrapKey(kek, wrapped []byte) ([]byte, error) {
	if len(wrapped)%8 != 0 || len(wrapped) < 24 {
		return nil, errors.New("AES key unwrap: the wrapped key must be at least 24 bytes, in 8-byte blocks")
	}
	b, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	n := len(wrapped)/8 - 1
	var a [8]byte
	copy(a[:], wrapped)
	r := append([]byte(nil), wrapped[8:]...)
	var blk [16]byte
	for j := 5; j >= 0; j-- {
		for i := n; i >= 1; i-- {
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(blk[:8], binary.BigEndian.Uint64(a[:])^t)
			copy(blk[8:], r[8*(i-1):8*i])
			b.Decrypt(blk[:], blk[:])
			copy(a[:], blk[:8])
			copy(r[8*(i-1):8*i], blk[8:])
		}
	}
	clear(blk[:])
	if subtle.ConstantTimeCompare(a[:], defaultIV[:]) != 1 {
		clear(r)
		return nil, errUnwrap
	}
	return r, nil
}

// wrapKey is RFC 3394 section 2.2.1, for the tests.
func wrapKey(kek, key []byte) ([]byte, error) {
	if len(key)%8 != 0 || len(key) < 16 {
		return nil, errors.New("AES key wrap: the key must be at least 16 bytes, in 8-byte blocks")
	}
	b, err := aes.NewCipher(kek)
	if err != nil {
		return nil, err
	}
	n := len(key) / 8
	a := defaultIV
	r := append([]byte(nil), key...)
	var blk [16]byte
	for j := 0; j <= 5; j++ {
		for i := 1; i <= n; i++ {
			copy(blk[:8], a[:])
			copy(blk[8:], r[8*(i-1):8*i])
			b.Encrypt(blk[:], blk[:])
			t := uint64(n*j + i)
			binary.BigEndian.PutUint64(a[:], binary.BigEndian.Uint64(blk[:8])^t)
			copy(r[8*(i-1):8*i], blk[8:])
		}
	}
	return append(a[:], r...), nil
}
