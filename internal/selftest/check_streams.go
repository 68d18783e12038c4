package selftest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cryptvol/cryptvol/ciphers/adiantum"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
)

// checkStream encrypts a ChaCha20 vector (the cipher `cryptvol enc
// -chacha20` uses) or an XChaCha12/XChaCha20 one (a 24-byte nonce;
// Adiantum's stream cipher) in one call and again in 7-byte pieces, which
// leave key stream buffered between calls.
func checkStream(_ context.Context, v, _ record) error {
	key, err := v.bytes("key")
	if err != nil {
		return err
	}
	nonce, err := v.bytes("nonce")
	if err != nil {
		return err
	}
	counter, err := v.int("counter")
	if err != nil {
		return err
	}
	rounds := 20
	if v.has("rounds") {
		if rounds, err = v.int("rounds"); err != nil {
			return err
		}
	}
	var pt []byte
	if v.has("msg") {
		msg, err := v.text("msg")
		if err != nil {
			return err
		}
		pt = []byte(msg)
	} else if pt, err = v.bytes("pt"); err != nil {
		return err
	}
	want, err := v.bytes("ct")
	if err != nil {
		return err
	}
	for _, piece := range []int{len(pt), 7} {
		c, err := chacha20.NewRounds(key, nonce, uint32(counter), rounds)
		if err != nil {
			return err
		}
		got := make([]byte, len(pt))
		for at := 0; at < len(pt); at += piece {
			end := min(at+piece, len(pt))
			c.XORKeyStream(got[at:end], pt[at:end])
		}
		if !bytes.Equal(got, want) {
			return mismatch("ct", got, want)
		}
	}
	return nil
}

// checkAdiantum encrypts and decrypts an Adiantum vector with the 32-byte
// tweak it gives, as one message and through the sector path the LUKS
// volumes use (EncryptSectors, one sector of the vector's length).
func checkAdiantum(_ context.Context, v, _ record) error {
	key, err := v.bytes("key")
	if err != nil {
		return err
	}
	rounds, err := v.int("rounds")
	if err != nil {
		return err
	}
	tweak, err := v.bytes("tweak")
	if err != nil {
		return err
	}
	pt, err := v.bytes("pt")
	if err != nil {
		return err
	}
	want, err := v.bytes("ct")
	if err != nil {
		return err
	}
	c, err := adiantum.New(key, rounds)
	if err != nil {
		return err
	}
	defer c.Zero()
	if len(pt) < adiantum.MinSize || len(tweak) != adiantum.TweakSize || len(want) != len(pt) {
		return fmt.Errorf("malformed vector: %d-byte message, %d-byte tweak, %d-byte ciphertext", len(pt), len(tweak), len(want))
	}
	got := make([]byte, len(pt))
	c.Encrypt(got, pt, tweak)
	if !bytes.Equal(got, want) {
		return mismatch("ct", got, want)
	}
	c.Decrypt(got, got, tweak)
	if !bytes.Equal(got, pt) {
		return mismatch("decrypted", got, pt)
	}
	if len(pt)%16 == 0 {
		copy(got, pt)
		c.EncryptSectors(got, got, len(pt), tweak)
		if !bytes.Equal(got, want) {
			return mismatch("sector ct", got, want)
		}
	}
	return nil
}
