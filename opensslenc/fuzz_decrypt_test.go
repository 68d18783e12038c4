package opensslenc

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// fuzzPassword is the fixed password every fuzzed file is decrypted with.
var fuzzPassword = []byte("fuzz")

// fuzzParams turns the input's first two bytes into a cipher and options,
// so one target covers every mode, the base64 reader and -nopad. The rest
// of the input is the file. EVP_BytesToKey or PBKDF2 with one
// iteration keeps each run cheap.
func fuzzParams(cipher, sel byte) Params {
	all := Ciphers()
	p := Params{
		Cipher:   all[int(cipher)%len(all)],
		Password: fuzzPassword,
		Base64:   sel&1 != 0,
		NoPad:    sel&2 != 0,
		PBKDF2:   sel&4 != 0,
	}
	if p.PBKDF2 {
		p.Iterations = 1
	}
	return p
}

// fuzzSelector is the inverse of fuzzParams for the seeds.
func fuzzSelector(t testing.TB, name string, base64, nopad, pbkdf2 bool) []byte {
	for i, c := range Ciphers() {
		if c.Name == name {
			var s byte
			if base64 {
				s |= 1
			}
			if nopad {
				s |= 2
			}
			if pbkdf2 {
				s |= 4
			}
			if i > 255 {
				t.Fatalf("cipher %s (index %d) does not fit the selector byte", name, i)
			}
			return []byte{byte(i), s}
		}
	}
	t.Fatalf("no cipher %s", name)
	return nil
}

// FuzzDecrypt decrypts fuzzed files with a fixed password. Nothing may
// panic; every error must be one of the package's sentinels (a reader
// error cannot happen: the input is in memory); the plaintext can never
// be longer than the ciphertext. When a raw (not base64) file decrypts, encrypting
// the plaintext again with the same salt must give back the file byte for
// byte: the deterministic inverse, which catches a decryptor that accepts
// what it should not (bad padding, a cut header). Seeds: real encryptions
// made here with every mode family (testdata/fuzz/FuzzDecrypt).
func FuzzDecrypt(f *testing.F) {
	ctx := context.Background()
	for _, s := range []struct {
		name                 string
		base64, nopad, pbkdf bool
		n                    int
	}{
		{"aes-256-cbc", false, false, true, 40},
		{"aes-128-ctr", false, false, false, 33},
		{"aes-256-cfb", true, false, true, 100},
		{"des-ede3-ofb", false, false, false, 17},
		{"chacha20", false, false, true, 70},
		{"aes-128-ecb", false, true, false, 32},
		{"rc4", true, false, false, 5},
	} {
		sel := fuzzSelector(f, s.name, s.base64, s.nopad, s.pbkdf)
		p := fuzzParams(sel[0], sel[1])
		p.Rand = bytes.NewReader([]byte("saltsalt"))
		var out bytes.Buffer
		o, err := NewEncryption(ctx, p, &out, bytes.NewReader(bytes.Repeat([]byte("plain"), s.n)[:s.n]))
		if err != nil {
			f.Fatal(err)
		}
		if err := o.Run(ctx); err != nil {
			f.Fatal(err)
		}
		f.Add(append(sel, out.Bytes()...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		p := fuzzParams(data[0], data[1])
		file := data[2:]
		var plain bytes.Buffer
		o, err := NewDecryption(ctx, p, &plain, bytes.NewReader(file))
		if err == nil {
			err = o.Run(ctx)
		}
		if err != nil {
			for _, want := range []error{ErrBadDecrypt, ErrBadMagic, ErrTruncated, ErrCorrupt, ErrNotBlockMultiple} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("%s: error wraps no sentinel: %v", p.Cipher.Name, err)
		}
		if plain.Len() > len(file) {
			t.Fatalf("%s: %d bytes of plaintext from a %d-byte file", p.Cipher.Name, plain.Len(), len(file))
		}
		if p.Base64 {
			return
		}
		q := p
		q.Rand = bytes.NewReader(o.Salt())
		var again bytes.Buffer
		e, err := NewEncryption(ctx, q, &again, bytes.NewReader(plain.Bytes()))
		if err == nil {
			err = e.Run(ctx)
		}
		if err != nil {
			t.Fatalf("%s: re-encrypting the %d-byte plaintext: %v", p.Cipher.Name, plain.Len(), err)
		}
		if !bytes.Equal(again.Bytes(), file) {
			t.Fatalf("%s: decrypt then encrypt gives %d bytes %x, not the file's %d bytes %x",
				p.Cipher.Name, again.Len(), again.Bytes()[:min(again.Len(), 48)], len(file), file[:min(len(file), 48)])
		}
	})
}
