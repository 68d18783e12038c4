package selftest

import (
	"bytes"
	"context"

	"github.com/cryptvol/cryptvol/ciphers/chacha20"
)

// checkStream encrypts a ChaCha20 vector (the cipher `cryptvol enc
// -chacha20` uses) in one call and again in 7-byte pieces, which leave
// key stream buffered between calls.
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
		c, err := chacha20.New(key, nonce, uint32(counter))
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
