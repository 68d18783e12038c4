package opensslenc

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseArgs feeds `openssl enc` option lists (NUL-separated) to
// ParseArgs: it never panics, and every error it returns wraps ErrUsage.
// Seeds: typical command lines and testdata/fuzz/FuzzParseArgs.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{
		"-aes-256-cbc\x00-pbkdf2\x00-iter\x0010000\x00-in\x00a\x00-out\x00b\x00-pass\x00pass:x",
		"-d\x00-chacha20\x00-K\x0000112233\x00-iv\x000011\x00-nosalt",
		"--in=a\x00-a\x00-A\x00-md\x00sha1\x00-S\x000102030405060708",
		"-list",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args := strings.Split(s, "\x00")
		if _, err := ParseArgs(args); err != nil && !errors.Is(err, ErrUsage) {
			t.Fatalf("ParseArgs(%q): %v does not wrap ErrUsage", args, err)
		}
	})
}
