package opensslenc

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Args
	}{
		{[]string{"-aes-256-cbc", "-d", "-in", "a", "-out", "b", "-k", "pw"},
			Args{Decrypt: true, Cipher: "aes-256-cbc", In: "a", Out: "b", PassKind: "k", Password: "pw", Iterations: 1}},
		// GNU-style doubles and =VALUE; the last cipher wins; -e after -d.
		{[]string{"--des3", "--in=x", "-cipher", "aes-128-ctr", "-d", "-e", "-kfile=f"},
			Args{Cipher: "aes-128-ctr", In: "x", PassKind: "kfile", Password: "f", Iterations: 1}},
		// -pbkdf2 defaults to 10000 iterations but keeps an -iter given
		// before or after it; -iter alone implies PBKDF2.
		{[]string{"-bf", "-pbkdf2"}, Args{Cipher: "bf", PBKDF2: true, Iterations: 10000}},
		{[]string{"-bf", "-iter", "5", "-pbkdf2"}, Args{Cipher: "bf", PBKDF2: true, Iterations: 5}},
		{[]string{"-bf", "-pbkdf2", "-iter", "5"}, Args{Cipher: "bf", PBKDF2: true, Iterations: 5}},
		{[]string{"-bf", "-iter", "7"}, Args{Cipher: "bf", PBKDF2: true, Iterations: 7}},
		{[]string{"-rc4", "-nosalt", "-salt", "-S", "01", "-K", "aa", "-iv", "bb", "-nopad", "-a", "-A", "-P", "-v"},
			Args{Cipher: "rc4", SaltHex: "01", HaveSalt: true, KeyHex: "aa", HaveKey: true, IVHex: "bb", HaveIV: true,
				NoPad: true, Base64: true, SingleLine: true, Print: 2, Verbose: true, Iterations: 1}},
		{[]string{"-chacha20", "-pass", "env:X", "-md", "sha512", "-base64", "-p", "-nosalt"},
			Args{Cipher: "chacha20", Pass: "env:X", Digest: "sha512", Base64: true, Print: 1, NoSalt: true, Iterations: 1}},
		{[]string{"-provider", "legacy", "-bufsize", "8k", "-debug", "-aes128"},
			Args{Cipher: "aes128", Iterations: 1, Ignored: []string{"-provider legacy", "-bufsize 8k", "-debug"}}},
		{[]string{"-list"}, Args{List: true, Iterations: 1}},
		{[]string{"-help"}, Args{Help: true, Iterations: 1}},
	} {
		got, err := ParseArgs(tc.args)
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *got, tc.want)
		}
	}
	for _, bad := range [][]string{
		{"-aes-256-cbc", "file.txt"},  // positional argument
		{"-aes-256-cbc", "-in"},       // missing value
		{"-aes-256-cbc", "-nosalt=1"}, // value on a flag
		{"-aes-256-cbc", "-iter", "0"},
		{"-aes-256-cbc", "-iter", "x"},
		{"-aes-256-xyz"},
		{"-aes-256-cbc", "-engine", "e"},
		{"-aes-256-cbc", "-z"},
		{"-"},
	} {
		if _, err := ParseArgs(bad); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: error %v, want a usage error", bad, err)
		}
	}
}

func TestParamsErrors(t *testing.T) {
	for _, bad := range [][]string{
		{"-k", "x"},                       // no cipher
		{"-none", "-k", "x"},              // no cipher either
		{"-aes-128-cbc", "-md", "sha999"}, // unknown digest
		{"-aes-128-cbc", "-K", "0g"},      // not hex
		{"-aes-128-cbc", "-k", "x", "-S", "xx"},
	} {
		a, err := ParseArgs(bad)
		if err != nil {
			t.Fatalf("%q: %v", bad, err)
		}
		if _, _, err := a.Params(PasswordSource{}); !errors.Is(err, ErrUsage) {
			t.Errorf("%q: error %v, want a usage error", bad, err)
		}
	}
	// -K without -iv for a cipher with an IV is OpenSSL's "iv undefined".
	a, _ := ParseArgs([]string{"-aes-128-cbc", "-K", "00"})
	p, _, err := a.Params(PasswordSource{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewEncryption(t.Context(), p, nil, nil); !errors.Is(err, ErrNoKey) {
		t.Errorf("-K without -iv: %v", err)
	}
	// ECB needs no IV; -iv is then only a warning.
	a, _ = ParseArgs([]string{"-aes-128-ecb", "-K", "00", "-iv", "01"})
	p, warns, err := a.Params(PasswordSource{})
	if err != nil || len(warns) != 2 {
		t.Fatalf("ecb: %v %q", err, warns)
	}
	if _, err := NewEncryption(t.Context(), p, nil, nil); err != nil {
		t.Errorf("ecb with -K only: %v", err)
	}
}

func TestParseHex(t *testing.T) {
	for _, tc := range []struct {
		in   string
		size int
		want string
		warn bool
	}{
		{"0102", 2, "0102", false},
		{"0a1", 2, "0a10", true},    // odd length fills the high nibble
		{"", 2, "0000", true},       // empty is all zeros
		{"aBcDeF", 2, "abcd", true}, // too long: cut
	} {
		b, w, err := ParseHex(tc.in, tc.size)
		if err != nil || hexOf(b) != tc.want || (w != "") != tc.warn {
			t.Errorf("%q: %x %q %v", tc.in, b, w, err)
		}
	}
	if _, _, err := ParseHex("0x12", 2); err == nil {
		t.Error("0x12 accepted")
	}
}
