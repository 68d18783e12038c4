package selftest

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/kdf/argon2"
)

// checkHash hashes a text message, in one write and byte by byte (the
// buffering paths differ).
func checkHash(_ context.Context, v, _ record) error {
	name, err := v.text("hash")
	if err != nil {
		return err
	}
	msg, err := v.text("msg")
	if err != nil {
		return err
	}
	want, err := v.bytes("digest")
	if err != nil {
		return err
	}
	spec, err := hashes.Lookup(name)
	if err != nil {
		return err
	}
	h := spec.New()
	h.Write([]byte(msg))
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return mismatch("digest", got, want)
	}
	h.Reset()
	for i := range len(msg) {
		h.Write([]byte{msg[i]})
	}
	if got := h.Sum(nil); !bytes.Equal(got, want) {
		return mismatch("byte-by-byte digest", got, want)
	}
	return nil
}

// checkPBKDF2 derives a key with kdf.PBKDF2, as the volume code does.
func checkPBKDF2(ctx context.Context, v, _ record) error {
	name, err := v.text("prf")
	if err != nil {
		return err
	}
	pw, err := v.text("password")
	if err != nil {
		return err
	}
	var salt []byte
	if v.has("salthex") {
		salt, err = v.bytes("salthex")
	} else {
		var s string
		s, err = v.text("salt")
		salt = []byte(s)
	}
	if err != nil {
		return err
	}
	iter, err := v.int("iterations")
	if err != nil {
		return err
	}
	want, err := v.bytes("dk")
	if err != nil {
		return err
	}
	spec, err := hashes.Lookup(name)
	if err != nil {
		return err
	}
	got, err := kdf.PBKDF2Context(ctx, spec, []byte(pw), salt, iter, len(want))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return mismatch("derived key", got, want)
	}
	return nil
}

// checkArgon2 derives an RFC 9106 tag (with secret and associated data).
func checkArgon2(ctx context.Context, v, _ record) error {
	var p argon2.Params
	switch m := v.get("mode"); m {
	case "Argon2id":
		p.Mode = argon2.Argon2id
	case "Argon2i":
		p.Mode = argon2.Argon2i
	case "Argon2d":
		p.Mode = argon2.Argon2d
	default:
		return fmt.Errorf("unknown Argon2 mode %q", m)
	}
	var err error
	ints := map[string]*uint32{"memory": &p.MemoryKiB, "passes": &p.Passes, "lanes": &p.Parallelism}
	for k, dst := range ints {
		n, err := v.int(k)
		if err != nil {
			return err
		}
		if n < 0 || uint64(n) > 1<<31 {
			return fmt.Errorf("field %q out of range: %d", k, n)
		}
		*dst = uint32(n)
	}
	var pw, salt, want []byte
	for k, dst := range map[string]*[]byte{"password": &pw, "salt": &salt, "secret": &p.Secret, "ad": &p.Associated, "tag": &want} {
		if *dst, err = v.bytes(k); err != nil {
			return err
		}
	}
	got, err := argon2.Key(ctx, p, pw, salt, uint32(len(want)))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return mismatch("tag", got, want)
	}
	return nil
}
