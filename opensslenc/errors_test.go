package opensslenc

import (
	"bytes"
	"errors"
	"testing"
)

// TestDecryptErrors damages ciphertexts made by openssl in the ways files
// get damaged and checks each gives its error, never a silent success.
func TestDecryptErrors(t *testing.T) {
	needOpenSSL(t)
	pt := randomBytes(1000, 5)
	salted := opensslEnc(t, pt, "-aes-256-cbc", "-k", testPassword, "-S", "0102030405060708")
	// A headered file with a known salt: openssl -S writes no header, so
	// put one in front, as openssl does with a random salt.
	withHeader := append([]byte(Magic+"\x01\x02\x03\x04\x05\x06\x07\x08"),
		opensslEnc(t, pt, "-aes-256-cbc", "-k", testPassword, "-pbkdf2", "-S", "0102030405060708")...)
	b64 := opensslEnc(t, pt, "-aes-256-cbc", "-k", testPassword, "-a")
	flip := func(b []byte, i int) []byte {
		c := append([]byte(nil), b...)
		c[i] ^= 0x40
		return c
	}
	for _, tc := range []struct {
		name  string
		input []byte
		args  []string
		want  error
	}{
		// Deterministic (fixed salt): this wrong password is known to
		// give bad padding, as it does in OpenSSL (checked below).
		{"wrong password", salted, []string{"-aes-256-cbc", "-k", "wrong", "-S", "0102030405060708"}, ErrBadDecrypt},
		{"wrong password pbkdf2", withHeader, []string{"-aes-256-cbc", "-k", "wrong", "-pbkdf2"}, ErrBadDecrypt},
		{"last block damaged", flip(salted, len(salted)-1), []string{"-aes-256-cbc", "-k", testPassword, "-S", "0102030405060708"}, ErrBadDecrypt},
		{"cut inside a block", salted[:len(salted)-1], []string{"-aes-256-cbc", "-k", testPassword, "-S", "0102030405060708"}, ErrTruncated},
		{"no ciphertext", nil, []string{"-aes-256-cbc", "-k", testPassword, "-S", "0102030405060708"}, ErrTruncated},
		{"cut inside the header", withHeader[:12], []string{"-aes-256-cbc", "-k", testPassword, "-pbkdf2"}, ErrTruncated},
		{"empty, header expected", nil, []string{"-aes-256-cbc", "-k", testPassword}, ErrBadMagic},
		{"no header (made with -S)", salted, []string{"-aes-256-cbc", "-k", testPassword}, ErrBadMagic},
		{"bad base64", append(append([]byte(nil), b64[:40]...), "*!*\n"...), []string{"-aes-256-cbc", "-k", testPassword, "-a"}, ErrCorrupt},
		{"base64 cut short", b64[:len(b64)-3], []string{"-aes-256-cbc", "-k", testPassword, "-a"}, ErrCorrupt},
	} {
		_, err := ours(t, tc.input, append([]string{"-d"}, tc.args...)...)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
	// OpenSSL agrees that the wrong password above is detectable.
	if out, err := opensslEncErr(salted, "-d", "-aes-256-cbc", "-k", "wrong", "-S", "0102030405060708"); err == nil {
		t.Errorf("openssl accepted the wrong password: %d bytes", len(out))
	}

	// -nopad encryption needs whole blocks.
	if _, err := ours(t, pt[:17], "-aes-128-cbc", "-k", "x", "-nopad"); !errors.Is(err, ErrNotBlockMultiple) {
		t.Errorf("-nopad with 17 bytes: %v", err)
	}
	// A damaged block before the last one is not detected (CBC has no
	// integrity check), exactly as in OpenSSL: both give the same bytes.
	dmg := flip(salted, 100)
	got, err := ours(t, dmg, "-d", "-aes-256-cbc", "-k", testPassword, "-S", "0102030405060708")
	want := opensslEnc(t, dmg, "-d", "-aes-256-cbc", "-k", testPassword, "-S", "0102030405060708")
	if err != nil || !bytes.Equal(got, want) || bytes.Equal(got, pt) {
		t.Errorf("damaged middle block: error %v, same as openssl %v", err, bytes.Equal(got, want))
	}
}

// TestCheckPadding tries every last byte and damaged padding bytes.
func TestCheckPadding(t *testing.T) {
	for _, bs := range []int{8, 16} {
		for n := 0; n < 256; n++ {
			b := make([]byte, bs)
			for i := range b {
				if i >= bs-n {
					b[i] = byte(n)
				}
			}
			b[bs-1] = byte(n)
			got, ok := checkPadding(b)
			want := n >= 1 && n <= bs
			if ok != want || (ok && got != n) {
				t.Errorf("bs %d, pad %d: got %d %v", bs, n, got, ok)
			}
			if want && n >= 2 {
				b[bs-n] ^= 1 // first padding byte wrong
				if _, ok := checkPadding(b); ok {
					t.Errorf("bs %d, pad %d: damaged padding accepted", bs, n)
				}
			}
		}
	}
}
