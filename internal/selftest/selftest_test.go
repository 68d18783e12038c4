package selftest

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// required is every algorithm the self-test must cover (the P1 list).
var required = []string{
	"AES-128", "AES-192", "AES-256", "Serpent", "Twofish", "Camellia", "Kuznyechik",
	"Blowfish", "Blowfish-LE", "CAST5", "Triple DES",
	"XTS-AES", "CBC-ESSIV", "LRW-AES",
	"SHA-1", "SHA-256", "SHA-512", "RIPEMD-160", "Whirlpool", "Streebog-512", "BLAKE2s-256",
	"PBKDF2-HMAC-SHA-1", "PBKDF2-HMAC-SHA-256", "PBKDF2-HMAC-SHA-512", "PBKDF2-HMAC-RIPEMD-160",
	"PBKDF2-HMAC-Whirlpool", "PBKDF2-HMAC-Streebog", "PBKDF2-HMAC-BLAKE2s-256",
	"Argon2id", "Argon2i",
	"ChaCha20", "XChaCha20", "XChaCha12", "Adiantum XChaCha12-AES", "Adiantum XChaCha20-AES",
	"XTS AES", "XTS Serpent", "XTS Twofish", "XTS Camellia", "XTS Kuznyechik",
	"XTS AES-Twofish", "XTS AES-Twofish-Serpent", "XTS Serpent-AES", "XTS Serpent-Twofish-AES",
	"XTS Twofish-Serpent", "XTS Camellia-Kuznyechik", "XTS Camellia-Serpent", "XTS Kuznyechik-AES",
	"XTS Kuznyechik-Serpent-Camellia", "XTS Kuznyechik-Twofish",
}

func TestRunAllPass(t *testing.T) {
	rs := Run(context.Background())
	got := map[string]bool{}
	for _, r := range rs {
		if got[r.Name] {
			t.Errorf("%s reported twice", r.Name)
		}
		got[r.Name] = true
		if !r.Passed() {
			t.Errorf("FAIL %s (%s): %v", r.Name, r.Source, r.Err)
		}
		if r.Vectors < 1 || r.Source == "" {
			t.Errorf("%s: %d vectors, source %q", r.Name, r.Vectors, r.Source)
		}
	}
	for _, n := range required {
		if !got[n] {
			t.Errorf("no result for %s", n)
		}
	}
	if len(rs) != len(required) {
		t.Errorf("%d results, want %d", len(rs), len(required))
	}
}

// copyVectors returns the embedded vector files as a writable map.
func copyVectors(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(vectors, "testdata", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := vectors.ReadFile(p)
		m[strings.TrimPrefix(p, "testdata/")] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// expected names the fields holding published answers.
var expected = map[string]bool{"ct": true, "digest": true, "dk": true, "tag": true, "crc_units": true, "crc_buffer": true}

// TestCorruptedVectorFails flips one hex digit of each published answer in
// turn, and of each key, and requires that exactly the algorithm of that
// vector then fails: a self-test that cannot fail would prove nothing.
func TestCorruptedVectorFails(t *testing.T) {
	base := copyVectors(t)
	altered := 0
	for file, f := range base {
		lines := strings.Split(string(f.Data), "\n")
		algo := ""
		for i, line := range lines {
			k, v, ok := strings.Cut(line, " = ")
			if !ok || strings.HasPrefix(line, "#") {
				continue
			}
			if k == "algo" {
				algo = v
			}
			if algo == "" || !(expected[k] || k == "key") {
				continue
			}
			m := copyVectors(t)
			changed := append([]string{}, lines...)
			changed[i] = k + " = " + flipDigit(v)
			m[file] = &fstest.MapFile{Data: []byte(strings.Join(changed, "\n"))}
			altered++
			for _, r := range run(context.Background(), m) {
				switch {
				case r.Name == algo && r.Passed():
					t.Errorf("%s line %d (%s) altered, but %s still passes", file, i+1, k, algo)
				case r.Name != algo && !r.Passed():
					t.Errorf("%s line %d altered, and unrelated %s fails: %v", file, i+1, r.Name, r.Err)
				}
			}
		}
	}
	// Every record has an answer, most a key: make sure the loop ran.
	if altered < 80 {
		t.Errorf("only %d alterations tried", altered)
	}
}

// TestCorruptedSetupFails alters the shared inputs of VeraCrypt's cascade
// test: every chain must then fail.
func TestCorruptedSetupFails(t *testing.T) {
	for _, field := range []string{"key1", "key2", "plain_crc", "aes_unit_ct"} {
		m := copyVectors(t)
		lines := strings.Split(string(m["cascades.txt"].Data), "\n")
		for i, l := range lines {
			if v, ok := strings.CutPrefix(l, field+" = "); ok {
				lines[i] = field + " = " + flipDigit(v)
			}
		}
		m["cascades.txt"] = &fstest.MapFile{Data: []byte(strings.Join(lines, "\n"))}
		failed := 0
		for _, r := range run(context.Background(), m) {
			if strings.HasPrefix(r.Name, "XTS ") && !r.Passed() {
				failed++
			}
		}
		// key1/key2 bytes only matter to the chains long enough to use
		// them, and aes_unit_ct only to AES; the others hit all 15.
		if failed == 0 || (field != "aes_unit_ct" && field != "key1" && field != "key2" && failed != 15) {
			t.Errorf("%s altered: %d chains fail", field, failed)
		}
	}
}

// flipDigit changes the first hex digit of a value ("seq:N" values are
// left to other tests).
func flipDigit(v string) string {
	for i, c := range v {
		if strings.ContainsRune("0123456789abcdefABCDEF", c) {
			r := byte('0')
			if c == '0' {
				r = '1'
			}
			return v[:i] + string(r) + v[i+1:]
		}
	}
	return v + "00"
}

func TestBrokenFilesFail(t *testing.T) {
	m := copyVectors(t)
	delete(m, "hashes.txt")
	m["argon2.txt"] = &fstest.MapFile{Data: []byte("this is not a vector\n")}
	m["lrw.txt"] = &fstest.MapFile{Data: []byte("source = no algo field\n")}
	bad := map[string]bool{}
	for _, r := range run(context.Background(), m) {
		if !r.Passed() {
			bad[r.Name] = true
		}
	}
	for _, n := range []string{"vector file hashes.txt", "vector file argon2.txt", "vector file lrw.txt"} {
		if !bad[n] {
			t.Errorf("%s not reported as failed (failures: %v)", n, bad)
		}
	}
}

func TestPanicBecomesFailure(t *testing.T) {
	err := safeCheck(context.Background(), func(context.Context, record, record) error { panic("boom") }, record{}, record{})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v", err)
	}
}

func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, r := range Run(ctx) {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", r.Name, r.Err)
		}
	}
}
