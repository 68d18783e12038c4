package opensslenc

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// opensslKeys runs `openssl enc -P ARGS`, which prints the salt, key and
// IV it would use without encrypting, with stdin as its standard input.
func opensslKeys(t *testing.T, env []string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("openssl", append(append([]string{"enc", "-P"}, opensslProviders...), args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("openssl enc -P %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// ourKeys is KeysText for the same command line.
func ourKeys(t *testing.T, src PasswordSource, args ...string) string {
	t.Helper()
	a, err := ParseArgs(args)
	if err != nil {
		t.Fatalf("ParseArgs %q: %v", args, err)
	}
	p, _, err := a.Params(src)
	if err != nil {
		t.Fatalf("Params %q: %v", args, err)
	}
	op, err := NewEncryption(context.Background(), p, nil, nil)
	if err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	defer op.Close()
	return op.KeysText()
}

// TestKeysMatchOpenSSL derives salt, key and IV for many command lines
// and compares them with what `openssl enc -P` prints for the same ones:
// EVP_BytesToKey and PBKDF2 with every digest, every cipher's key and IV
// lengths, and OpenSSL's rules for -S, -K and -iv values that are too
// short or too long.
func TestKeysMatchOpenSSL(t *testing.T) {
	needOpenSSL(t)
	salt := []string{"-S", "0102030405060708"}
	var cases [][]string
	for _, d := range DigestNames() {
		cases = append(cases,
			append([]string{"-aes-256-cbc", "-k", testPassword, "-md", d}, salt...),
			append([]string{"-aes-256-cbc", "-k", testPassword, "-md", d, "-pbkdf2", "-iter", "7"}, salt...),
			[]string{"-chacha20", "-k", testPassword, "-md", d, "-nosalt"},
		)
	}
	for _, c := range Ciphers() {
		cases = append(cases, append([]string{"-" + c.Name, "-k", testPassword}, salt...))
	}
	cases = append(cases,
		[]string{"-aes-128-cbc", "-k", testPassword, "-nosalt"},
		[]string{"-aes-128-cbc", "-k", "", "-nosalt"},
		[]string{"-aes-128-cbc", "-k", testPassword, "-S", "0a1"},
		[]string{"-aes-128-cbc", "-k", testPassword, "-S", "0102030405060708aabb"},
		[]string{"-aes-128-cbc", "-k", testPassword, "-S", "0102030405060708", "-K", "00112233", "-iv", "9"},
		[]string{"-aes-128-cbc", "-K", "00112233445566778899aabbccddeeff0011", "-iv", "0f0e"},
		[]string{"-aes-256-ctr", "-pbkdf2", "-k", testPassword, "-S", "ffffffffffffffff"},
		[]string{"-aes-256-ctr", "-iter", "3", "-pbkdf2", "-k", testPassword, "-S", "ffffffffffffffff"},
		[]string{"-aes-256-ctr", "-pbkdf2", "-iter", "3", "-k", testPassword, "-S", "ffffffffffffffff"},
		[]string{"-des3", "-k", testPassword, "-S", "0102030405060708"},
		[]string{"-aes256", "-k", testPassword, "-S", "0102030405060708"},
	)
	for _, args := range cases {
		want := opensslKeys(t, nil, "", args...)
		if !strings.Contains(strings.Join(args, " "), "-k ") {
			// Without a password OpenSSL prints an uninitialised salt
			// buffer; cryptvol prints no salt line.
			_, want, _ = strings.Cut(want, "\n")
		}
		if got := ourKeys(t, PasswordSource{}, args...); got != want {
			t.Errorf("%q:\n got %q\nwant %q", args, got, want)
		}
	}
}

// TestPasswordSources reads the password through each -pass form and
// -kfile, from the same sources openssl reads, and compares the keys.
// The file ends in CRLF: -pass file: keeps the CR (only the newline is
// cut), -kfile strips both.
func TestPasswordSources(t *testing.T) {
	needOpenSSL(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte("line one\r\nline two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"CRYPTVOL_TEST_PW=from the environment"}
	getenv := func(k string) (string, bool) {
		if k == "CRYPTVOL_TEST_PW" {
			return "from the environment", true
		}
		return "", false
	}
	base := []string{"-aes-128-cbc", "-nosalt"}
	for _, tc := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"-pass", "pass:literal text"}, ""},
		{[]string{"-pass", "env:CRYPTVOL_TEST_PW"}, ""},
		{[]string{"-pass", "file:" + file}, ""},
		{[]string{"-pass", "stdin"}, "typed in\r\nnext line\n"},
		{[]string{"-kfile", file}, ""},
		{[]string{"-k", "k wins", "-pass", "pass:ignored"}, ""},
	} {
		args := append(append([]string{}, base...), tc.args...)
		want := opensslKeys(t, env, tc.stdin, args...)
		src := PasswordSource{Stdin: strings.NewReader(tc.stdin), Getenv: getenv}
		if got := ourKeys(t, src, args...); got != want {
			t.Errorf("%q:\n got %q\nwant %q", tc.args, got, want)
		}
	}
	// The stdin source reads only its line: the data after it stays.
	in := strings.NewReader("secret\nDATA")
	pw, err := PasswordSource{Stdin: in}.ReadPassword("stdin")
	rest := new(bytes.Buffer)
	rest.ReadFrom(in)
	if err != nil || string(pw) != "secret" || rest.String() != "DATA" {
		t.Errorf("stdin: password %q, rest %q, error %v", pw, rest, err)
	}
}
