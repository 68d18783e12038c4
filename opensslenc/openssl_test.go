package opensslenc

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// The installed `openssl` binary is the oracle of these tests. OpenSSL 3
// only offers RC4, Blowfish and DES through its legacy provider, so every
// call loads it beside the default provider.
var opensslProviders = []string{"-provider", "legacy", "-provider", "default"}

func needOpenSSL(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed (.ci/run installs it)")
	}
}

// opensslEnc runs `openssl enc ARGS` with stdin as input and returns its
// standard output.
func opensslEnc(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("openssl", append(append([]string{"enc"}, opensslProviders...), args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("openssl enc %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// ours runs this package on the same command line, as `cryptvol enc`
// does: ParseArgs, Params, then the operation.
func ours(t testing.TB, input []byte, args ...string) ([]byte, error) {
	t.Helper()
	a, err := ParseArgs(args)
	if err != nil {
		t.Fatalf("ParseArgs %q: %v", args, err)
	}
	p, _, err := a.Params(PasswordSource{})
	if err != nil {
		t.Fatalf("Params %q: %v", args, err)
	}
	var out bytes.Buffer
	var op *Operation
	if a.Decrypt {
		op, err = NewDecryption(context.Background(), p, &out, bytes.NewReader(input))
	} else {
		op, err = NewEncryption(context.Background(), p, &out, bytes.NewReader(input))
	}
	if err != nil {
		return nil, err
	}
	defer op.Close()
	err = op.Run(context.Background())
	return out.Bytes(), err
}

func hexOf(b []byte) string { return fmt.Sprintf("%x", b) }

// opensslEncErr is opensslEnc that returns the error instead of failing.
func opensslEncErr(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("openssl", append(append([]string{"enc"}, opensslProviders...), args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	return cmd.Output()
}
