package opensslenc

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// TestCounting counts the bytes of a real encryption: what it read of
// the plaintext and wrote of the file (salted header, padded blocks).
func TestCounting(t *testing.T) {
	plain := bytes.Repeat([]byte("counted "), 1000)
	ea, err := ParseArgs([]string{"-aes-256-cbc", "-pbkdf2", "-iter", "1", "-k", "pw"})
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := ea.Params(PasswordSource{})
	if err != nil {
		t.Fatal(err)
	}
	in := &CountingReader{R: bytes.NewReader(plain)}
	var buf bytes.Buffer
	out := &CountingWriter{W: &buf}
	op, err := NewEncryption(context.Background(), p, out, in)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	if err := op.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := int64(16 + (len(plain)/16+1)*16) // "Salted__" and salt, then PKCS#7-padded blocks
	if in.N != int64(len(plain)) || out.N != want || out.N != int64(buf.Len()) {
		t.Fatalf("read %d of %d, wrote %d (buffer %d), want %d", in.N, len(plain), out.N, buf.Len(), want)
	}
	if n, err := io.Copy(io.Discard, in); n != 0 || err != nil || in.N != int64(len(plain)) {
		t.Fatalf("a read at the end: %d, %v, count %d", n, err, in.N)
	}
}
