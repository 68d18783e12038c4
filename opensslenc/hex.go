package opensslenc

import "fmt"

// ParseHex reads a hex -K, -iv or -S value into size bytes the way
// OpenSSL's set_hex does: a short value is padded with zero bytes (and an
// odd digit count fills the high nibble of the last byte), a long one is
// cut. warning says which happened, in OpenSSL's words, or is "".
func ParseHex(s string, size int) (b []byte, warning string, err error) {
	switch {
	case len(s) > 2*size:
		warning = "hex string is too long, ignoring excess"
		s = s[:2*size]
	case len(s) < 2*size:
		warning = "hex string is too short, padding with zero bytes to length"
	}
	b = make([]byte, size)
	for i := 0; i < len(s); i++ {
		v, ok := hexDigit(s[i])
		if !ok {
			return nil, "", fmt.Errorf("non-hex digit %q in %q", s[i], s)
		}
		if i%2 == 0 {
			b[i/2] = v << 4
		} else {
			b[i/2] |= v
		}
	}
	return b, warning, nil
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
