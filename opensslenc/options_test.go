package opensslenc

import (
	"bytes"
	"testing"
)

// TestOptionsInterop covers the options the cipher matrix leaves out:
// single-line base64, a fixed salt (no header), -nopad, and OpenSSL's
// aliases, each checked in both directions against openssl, byte for byte
// where the output is deterministic.
func TestOptionsInterop(t *testing.T) {
	needOpenSSL(t)
	pt := randomBytes(5000, 3)
	blocks := pt[:4096]
	for _, tc := range []struct {
		args          []string
		input         []byte
		deterministic bool
	}{
		{[]string{"-aes-256-cbc", "-k", testPassword, "-a", "-A"}, pt, false},
		{[]string{"-aes-256-cbc", "-k", testPassword, "-a", "-nosalt"}, pt, true},
		{[]string{"-aes-256-cbc", "-k", testPassword, "-base64", "-A", "-nosalt"}, pt, true},
		{[]string{"-aes-128-ctr", "-k", testPassword, "-S", "0011223344556677"}, pt, true},
		{[]string{"-aes-128-cbc", "-k", testPassword, "-nosalt", "-nopad"}, blocks, true},
		{[]string{"-bf-cbc", "-k", testPassword, "-nosalt", "-nopad"}, blocks, true},
		{[]string{"-aes-128-ecb", "-k", testPassword, "-nosalt", "-nopad"}, blocks, true},
		{[]string{"-aes-128-ctr", "-k", testPassword, "-nosalt", "-nopad"}, pt, true},
		{[]string{"-aes256", "-k", testPassword, "-nosalt"}, pt, true},
		{[]string{"-des3", "-k", testPassword, "-nosalt"}, pt, true},
		{[]string{"-bf", "-k", testPassword, "-nosalt"}, pt, true},
		{[]string{"-des-ede3", "-k", testPassword, "-nosalt"}, pt, true},
		{[]string{"-aes-128-cbc", "-k", "", "-nosalt"}, pt, true},
		{[]string{"-chacha20", "-K", "00", "-iv", "feffffff"}, pt, true},         // counter wraps after 2 blocks
		{[]string{"-chacha20", "-K", "00", "-iv", "ffffffffffffffff"}, pt, true}, // and carries into a full nonce word
		{[]string{"-aes-128-ctr", "-K", "00", "-iv", "ffffffffffffffffffffffffffffffff"}, pt, true},
		{[]string{"-aes-128-ctr", "-K", "00", "-iv", "0000000000000000fffffffffffffffe"}, pt, true},
	} {
		ctOpenSSL := opensslEnc(t, tc.input, tc.args...)
		got, err := ours(t, ctOpenSSL, append([]string{"-d"}, tc.args...)...)
		if err != nil || !bytes.Equal(got, tc.input) {
			t.Errorf("%q: openssl -> cryptvol: error %v, equal %v", tc.args, err, bytes.Equal(got, tc.input))
			continue
		}
		ctOurs, err := ours(t, tc.input, tc.args...)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if back := opensslEnc(t, ctOurs, append([]string{"-d"}, tc.args...)...); !bytes.Equal(back, tc.input) {
			t.Errorf("%q: cryptvol -> openssl: plaintext differs", tc.args)
		}
		if tc.deterministic && !bytes.Equal(ctOurs, ctOpenSSL) {
			t.Errorf("%q: ciphertexts differ", tc.args)
		}
	}
}

// TestBase64Lines decodes base64 laid out in lines of other lengths than
// OpenSSL's 64 (76 like MIME, one line, CRLF), as people paste it.
func TestBase64Lines(t *testing.T) {
	pt := randomBytes(1000, 4)
	args := []string{"-aes-128-ctr", "-K", "01", "-iv", "02", "-a"}
	ct, err := ours(t, pt, args...)
	if err != nil {
		t.Fatal(err)
	}
	text := bytes.ReplaceAll(ct, []byte("\n"), nil)
	for _, layout := range [][]byte{text, wrap(text, 76, "\n"), wrap(text, 64, "\r\n"), append(wrap(text, 10, "\n"), '\n')} {
		got, err := ours(t, layout, append([]string{"-d"}, args...)...)
		if err != nil || !bytes.Equal(got, pt) {
			t.Errorf("layout %q...: error %v", layout[:20], err)
		}
	}
	// OpenSSL's own layout: 64-character lines, each ending in a newline.
	lines := bytes.Split(bytes.TrimSuffix(ct, []byte("\n")), []byte("\n"))
	for i, l := range lines {
		if len(l) != 64 && i != len(lines)-1 {
			t.Fatalf("line %d is %d characters", i, len(l))
		}
	}
	if ct[len(ct)-1] != '\n' {
		t.Error("no final newline")
	}
}

func wrap(b []byte, width int, nl string) []byte {
	var out []byte
	for len(b) > width {
		out = append(append(out, b[:width]...), nl...)
		b = b[width:]
	}
	return append(out, b...)
}
