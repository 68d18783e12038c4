package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusedOptionsExitCodes runs the real commands with options the
// libraries refuse and checks the exit code and the message, byte for
// byte: a refused option is a usage error (exit 1, with the usage hint)
// because the library marks it volume.ErrInvalidOption (or
// archive.ErrInvalidOption), not because of the words of its message. The
// keyslot refusals the CLI has always given exit 4 keep it.
func TestRefusedOptionsExitCodes(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pw, pw2 := file("pw", "pw\n"), file("pw2", "pw2\n")
	if err := os.Mkdir(filepath.Join(dir, "kd"), 0o700); err != nil {
		t.Fatal(err)
	}
	at := func(name string) string { return filepath.Join(dir, name) }
	l2, l1 := at("l2.img"), at("l1.img")
	for _, args := range [][]string{
		{"create", l2, "--type", "luks2", "--size", "20M", "--password-file", pw, "--non-interactive", "--quick", "--filesystem", "none", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"},
		{"create", l1, "--type", "luks1", "--size", "20M", "--password-file", pw, "--non-interactive", "--quick", "--filesystem", "none", "--pbkdf-force-iterations", "1000"},
		{"create", at("tc.hc"), "--size", "1M", "--password-file", pw, "--non-interactive", "--quick", "--filesystem", "none", "--pim", "1"},
	} {
		if code, _, errOut := runCLI(args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	tcv, img, odd := at("tc.hc"), file("img.bin", strings.Repeat("\x00", 2<<20)), file("odd.bin", strings.Repeat("\x00", 1000001))
	re := func(extra ...string) []string {
		return append(append([]string{"reencrypt"}, extra...), "--password-file", pw)
	}
	open := func(cmd string, extra ...string) []string {
		return append(append([]string{cmd, tcv}, extra...), "--password-file", pw, "--pim", "1")
	}
	tc := func(extra ...string) []string {
		return append([]string{"create", at("new.hc"), "--size", "1M", "--password-file", pw, "--non-interactive", "--quick", "--filesystem", "none"}, extra...)
	}
	lk := func(extra ...string) []string {
		return append([]string{"create", at("new.img"), "--type", "luks2", "--size", "20M", "--password-file", pw, "--non-interactive", "--quick", "--filesystem", "none"}, extra...)
	}
	lkKey := func(extra ...string) []string { // key files instead of a password
		return append([]string{"create", at("new.img"), "--type", "luks2", "--size", "20M", "--password=", "--non-interactive", "--quick", "--filesystem", "none"}, extra...)
	}
	add := func(vol string, extra ...string) []string {
		return append([]string{"keyslot", "add", vol, "--password-file", pw, "--new-password-file", pw2}, extra...)
	}
	arc := func(extra ...string) []string {
		return append(append([]string{"archive", "create", at("a.cva"), "--password-file", pw}, extra...), pw)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		msg  string // the error line, after "cryptvol CMD: "
	}{
		{"create/unknown-encryption", tc("--encryption", "Foo"), 1, `unknown or legacy encryption "Foo" (want one of AES, Serpent, Twofish, Camellia, Kuznyechik, AES-Twofish, AES-Twofish-Serpent, Serpent-AES, Serpent-Twofish-AES, Twofish-Serpent, Camellia-Kuznyechik, Camellia-Serpent, Kuznyechik-AES, Kuznyechik-Serpent-Camellia, Kuznyechik-Twofish)`},
		{"create/truecrypt-camellia", tc("--type", "truecrypt", "--encryption", "Camellia"), 1, `TrueCrypt volumes cannot use Camellia (VeraCrypt only)`},
		{"create/unknown-hash", tc("--hash", "Foo"), 1, `unknown hash "Foo" for new volumes (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160 or argon2id)`},
		{"create/size-not-sectors", tc("--size", "1000001"), 1, `the size must be a multiple of 512 bytes (got 1000001)`},
		{"create/truecrypt-pim", tc("--type", "truecrypt", "--pim", "5"), 1, `TrueCrypt volumes have no PIM`},
		{"luks-create/type", lk("--type", "luks3"), 1, `--type "luks3": want veracrypt, truecrypt, luks1 or luks2`},
		{"luks-create/sector-size", lk("--sector-size", "3000"), 1, `sector size 3000: want 512, 1024, 2048 or 4096`},
		{"luks-create/cipher", lk("--cipher", "foo-bar"), 1, `cipher "foo-bar": unsupported chaining mode "bar" (want xts, cbc, lrw, ecb or adiantum)`},
		{"luks-create/pbkdf-memory", lk("--pbkdf", "argon2id", "--pbkdf-memory", "1"), 1, `--pbkdf-memory 1 KiB outside cryptsetup's 32..4194304`},
		{"luks-create/pbkdf-parallel", lk("--pbkdf-parallel", "9"), 1, `--pbkdf-parallel 9: cryptsetup allows at most 4`},
		{"luks-create/luks1-argon2", lk("--type", "luks1", "--pbkdf", "argon2id"), 1, `LUKS1 keyslots use PBKDF2 only, not argon2id`},
		{"luks-create/iterations", lk("--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "10"), 1, `PBKDF2 iterations 10 below cryptsetup's minimum 1000`},
		{"luks-create/too-small", lk("--size", "1M"), 1, `the device (1048576 bytes) is too small: the data area would start at 16777216`},
		{"luks-create/keyfile-offset", lk("--keyfile-offset", "3"), 1, `--keyfile-offset and --keyfile-size need a key file`},
		{"luks-create/keyfile-missing", lkKey("--keyfile", at("nonexist")), 1, `key file: open ` + at("nonexist") + `: no such file or directory`},
		{"luks-create/keyfile-directory", lkKey("--keyfile", at("kd")), 1, `key file ` + at("kd") + `: read ` + at("kd") + `: is a directory`},
		{"luks-create/two-keyfiles", lkKey("--keyfile", pw, "--keyfile", pw2), 1, `a LUKS keyslot takes one key file, not 2`},
		{"keyslot/slot-luks2", add(l2, "--key-slot", "40", "--pbkdf-force-iterations", "1000"), 1, `keyslot 40 out of range 0..31`},
		{"keyslot/slot-luks1", add(l1, "--key-slot", "9", "--pbkdf-force-iterations", "1000"), 1, `keyslot 9 out of range 0..7`},
		{"keyslot/pbkdf", add(l2, "--pbkdf", "foo"), 1, `unknown --pbkdf "foo" (want pbkdf2, argon2i or argon2id)`},
		{"keyslot/pbkdf2-iterations", add(l2, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "10"), 1, `PBKDF2 iterations 10 below cryptsetup's minimum 1000`},
		{"keyslot/argon2-time", add(l2, "--pbkdf", "argon2id", "--pbkdf-force-iterations", "1", "--pbkdf-memory", "32"), 1, `argon2 time cost 1 below cryptsetup's minimum 4`},
		{"keyslot/luks1-argon2", add(l1, "--pbkdf", "argon2id"), 1, `LUKS1 keyslots use PBKDF2 only, not argon2id`},
		{"keyslot/change-pbkdf", []string{"keyslot", "change", l2, "--password-file", pw, "--new-password-file", pw2, "--pbkdf", "foo"}, 1, `unknown --pbkdf "foo" (want pbkdf2, argon2i or argon2id)`},
		{"keyslot/pbkdf-memory", add(l2, "--pbkdf", "argon2id", "--pbkdf-memory", "1", "--pbkdf-force-iterations", "4"), 1, `--pbkdf-memory 1 KiB outside cryptsetup's 32..4194304`},
		{"keyslot/pbkdf-parallel", add(l2, "--pbkdf", "argon2id", "--pbkdf-parallel", "9", "--pbkdf-force-iterations", "4"), 1, `--pbkdf-parallel 9: cryptsetup allows at most 4`},
		{"keyslot/hash", add(l2, "--hash", "foo", "--pbkdf-force-iterations", "1000"), 1, `unsupported hash "foo"`},
		// Refusals of reencrypt and of the open options: typed where they
		// are refused, not matched by words (--cipher foo-bar was exit
		// 4, --type foo exit 2 or 4, --hash Foo exit 4 for info).
		{"reencrypt/resilience", re(l2, "--resilience", "foo"), 1, `--resilience "foo": want checksum or journal`},
		{"reencrypt/luks1-sector-size", re(l1, "--sector-size", "4096"), 1, `LUKS1 volumes have 512-byte sectors only (convert to LUKS2 first for larger ones)`},
		{"reencrypt/key-size", re(l2, "--key-size", "7"), 1, `key size 7 bits is not a whole number of bytes`},
		{"reencrypt/sector-size", re(l2, "--sector-size", "3000"), 1, `sector size 3000: want 512, 1024, 2048 or 4096`},
		{"reencrypt/cipher", re(l2, "--cipher", "foo-bar"), 1, `cipher "foo-bar": unsupported chaining mode "bar" (want xts, cbc, lrw, ecb or adiantum)`},
		{"reencrypt/encryption", re(tcv, "--pim", "1", "--encryption", "Foo"), 1, `unknown or legacy encryption "Foo" (want one of AES, Serpent, Twofish, Camellia, Kuznyechik, AES-Twofish, AES-Twofish-Serpent, Serpent-AES, Serpent-Twofish-AES, Twofish-Serpent, Camellia-Kuznyechik, Camellia-Serpent, Kuznyechik-AES, Kuznyechik-Serpent-Camellia, Kuznyechik-Twofish)`},
		{"reencrypt/hash", re(tcv, "--hash", "Foo"), 1, `unknown hash "Foo" (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160, SHA-1 or argon2id)`},
		{"reencrypt/type", re(tcv, "--type", "foo"), 1, `--type "foo": re-encryption is for veracrypt, truecrypt, luks, luks1 and luks2 volumes (or auto)`},
		{"reencrypt/encrypt-type", re("--encrypt", img, "--type", "foo"), 1, `--encrypt --type "foo": want veracrypt, truecrypt or luks2`},
		{"reencrypt/encrypt-size", re("--encrypt", odd, "--force"), 1, `the image size must be a multiple of 512 bytes (got 1000001)`},
		{"reencrypt/encrypt-encryption", re("--encrypt", img, "--encryption", "Foo", "--force"), 1, `unknown encryption algorithm "Foo"`},
		{"reencrypt/encrypt-truecrypt-prf", re("--encrypt", img, "--type", "truecrypt", "--hash", "BLAKE2s-256", "--force"), 1, `BLAKE2s-256 is not available for TrueCrypt volumes`},
		{"info/type", open("info", "--type", "foo"), 1, `unknown volume type "foo" (want auto, veracrypt, truecrypt, luks, luks1, luks2, bitlk or fvault2)`},
		{"info/hash", open("info", "--hash", "Foo"), 1, `unknown hash "Foo" (want SHA-512, Whirlpool, SHA-256, BLAKE2s-256, Streebog, RIPEMD-160, SHA-1 or argon2id)`},
		{"ls/encryption", open("ls", "--encryption", "Foo"), 1, `unknown encryption algorithm "Foo"`},
		{"archive/lanes", arc("--argon2-lanes", "0"), 1, `archive: argon2 lanes 0: want 1 to 64`},
		{"archive/passes", arc("--argon2-passes", "0"), 1, `archive: argon2 passes 0: want 1 to 64`},
		{"archive/memory", arc("--argon2-memory", "1K"), 1, `archive: argon2 memory 1 KiB: want 32 KiB (8 per lane) to 4 GiB`},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runCLI(c.args...)
			cmd := c.args[0]
			if code != c.code {
				t.Errorf("exit %d, want %d: %s", code, c.code, errOut)
			}
			line := "cryptvol " + cmd + ": " + c.msg + "\n"
			if !strings.Contains(errOut, line) {
				t.Errorf("stderr %q does not hold %q", errOut, line)
			}
			hint := "run 'cryptvol help " + cmd + "' for usage"
			if got := strings.Contains(errOut, hint); got != (c.code == exitUsage) {
				t.Errorf("usage hint shown: %v, want %v: %s", got, c.code == exitUsage, errOut)
			}
		})
	}
}
