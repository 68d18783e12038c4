package reencrypt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

var luksCreds = volume.Credentials{Password: []byte("luks re-encryption")}

// cryptsetup runs the cryptsetup oracle, skipping the test where it is
// not installed.
func cryptsetup(t testing.TB, stdin string, args ...string) (string, bool) {
	t.Helper()
	path, err := exec.LookPath("cryptsetup")
	if err != nil {
		t.Skip("cryptsetup is not installed (apt-get install cryptsetup-bin)")
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestLUKS2NewKeyCipherSectorSize re-encrypts a LUKS2 volume with a new
// key, then with Serpent and 4096-byte sectors, then back to AES with a
// journal: the data reads back the same each time, the key changes, and
// cryptsetup accepts the passphrase and sees the new cipher.
func TestLUKS2NewKeyCipherSectorSize(t *testing.T) {
	p, sum := newLUKS(t, 24<<20, luksCreds, luks.CreateOptions{SectorSize: 512})
	_, key0, _ := sumOf(t, p, luksCreds, volume.Options{})
	for i, o := range []Options{
		{},
		{Cipher: "serpent-xts-plain64", SectorSize: 4096},
		{Cipher: "aes-cbc-essiv:sha256", KeySize: 256, Resilience: volume.ResilienceJournal},
		{Cipher: "aes-xts-plain64", KeySize: 512},
	} {
		reencrypt(t, p, luksCreds, o, 1<<20)
		got, key, err := sumOf(t, p, luksCreds, volume.Options{})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got != sum {
			t.Fatalf("step %d: the data changed", i)
		}
		if bytes.Equal(key, key0) {
			t.Fatalf("step %d: the volume key did not change", i)
		}
		key0 = key
		out, ok := cryptsetup(t, "", "luksDump", p)
		if !ok || strings.Contains(out, "Requirements:") {
			t.Fatalf("step %d: cryptsetup luksDump:\n%s", i, out)
		}
		if o.Cipher != "" && !strings.Contains(out, o.Cipher) {
			t.Fatalf("step %d: cryptsetup does not see %s:\n%s", i, o.Cipher, out)
		}
		if o.Cipher == "" || strings.HasPrefix(o.Cipher, "aes") {
			if out, ok := cryptsetup(t, string(luksCreds.Password), "open", "--test-passphrase", "--key-file", "-", p); !ok {
				t.Fatalf("step %d: cryptsetup rejects the passphrase:\n%s", i, out)
			}
		}
	}
}

// TestLUKS1StaysLUKS1 re-encrypts LUKS1 volumes of the corpus (through
// LUKS2, as cryptsetup does): they come back LUKS1, with the same data,
// a new key, and cryptsetup accepts the key file.
func TestLUKS1StaysLUKS1(t *testing.T) {
	dir := testdata.Unpack(t, "luks1-images.tar.xz") + "/luks1-images"
	c := volume.Credentials{Keyfiles: []string{dir + "/keyfile1"}}
	for _, name := range []string{"luks1_aes-xts-plain64-sha256.img", "luks1_serpent-xts-plain64-whirlpool.img"} {
		p := testdata.CopyFile(t, dir+"/"+name)
		sum, key0, err := sumOf(t, p, c, volume.Options{})
		if err != nil {
			t.Fatal(err)
		}
		reencrypt(t, p, c, Options{}, 1<<20)
		got, key, err := sumOf(t, p, c, volume.Options{Type: "luks1"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != sum || bytes.Equal(key, key0) {
			t.Fatalf("%s: data changed (%v) or key did not", name, got != sum)
		}
		out, ok := cryptsetup(t, "", "luksDump", p)
		if !ok || !strings.Contains(out, "Version:       \t1") {
			t.Fatalf("%s: not LUKS1 for cryptsetup:\n%s", name, out)
		}
		if strings.Contains(name, "aes") {
			if out, ok := cryptsetup(t, "", "open", "--test-passphrase", "--key-file", dir+"/keyfile1", p); !ok {
				t.Fatalf("%s: cryptsetup rejects the key file:\n%s", name, out)
			}
		}
	}
}

// TestLUKS2CrashAnywhere stops a re-encryption after every number of its
// writes, tearing the one it stops in, and checks what cryptsetup and
// cryptvol make of the volume: cryptsetup's luksDump shows the
// re-encryption requirement whenever one is recorded, an ordinary open
// says it must be completed, and a resume completes it with the data
// intact under a new key.
func TestLUKS2CrashAnywhere(t *testing.T) {
	base, sum := newLUKS(t, 20<<20, luksCreds, luks.CreateOptions{SectorSize: 4096})
	_, key0, _ := sumOf(t, base, luksCreds, volume.Options{})
	const chunk = 1 << 20
	countDev := openDev(t, testdata.CopyFile(t, base))
	count := &crashDevice{Device: countDev, allowed: 1 << 30}
	r, err := Start(context.Background(), count, nil, luksCreds, Options{})
	if err == nil {
		err = Run(context.Background(), r, RunOptions{Chunk: chunk})
	}
	countDev.Close()
	if err != nil {
		t.Fatal(err)
	}
	total := count.done
	step := 1
	if testing.Short() {
		step = 3
	}
	// Without cryptsetup (Windows, under Wine) cryptvol's own view is
	// checked alone.
	_, lerr := exec.LookPath("cryptsetup")
	haveCryptsetup := lerr == nil
	if !haveCryptsetup {
		t.Log("NOT CHECKED: cryptsetup's luksDump of each stop (cryptsetup is not installed)")
	}
	resumed := 0
	defer func() {
		// Most stops fall inside the re-encryption proper.
		if resumed < total/(2*step) {
			t.Errorf("only %d of the %d stops left a re-encryption to resume", resumed, total)
		}
	}()
	for k := 0; k < total; k += step {
		t.Run(fmt.Sprintf("after-%d-of-%d", k, total), func(t *testing.T) {
			p := testdata.CopyFile(t, base)
			dev := openDev(t, p)
			cd := &crashDevice{Device: dev, allowed: k}
			r, err := Start(context.Background(), cd, nil, luksCreds, Options{})
			if err == nil {
				err = Run(context.Background(), r, RunOptions{Chunk: chunk})
			}
			dev.Close()
			if !errors.Is(err, errCrash) {
				t.Fatalf("got %v, want the simulated crash", err)
			}
			got, key, err := sumOf(t, p, luksCreds, volume.Options{})
			dump := "Requirements:\tonline-reencrypt-v2 (not checked)"
			if haveCryptsetup {
				var ok bool
				if dump, ok = cryptsetup(t, "", "luksDump", p); !ok {
					t.Fatalf("cryptsetup cannot read the header:\n%s", dump)
				}
			}
			switch {
			case err == nil:
				if got != sum {
					t.Fatalf("opens (old key: %v) with other data", bytes.Equal(key, key0))
				}
				if haveCryptsetup && strings.Contains(dump, "online-reencrypt") {
					t.Fatal("opens although cryptsetup sees a re-encryption")
				}
				return
			case !errors.Is(err, volume.ErrReencrypting):
				t.Fatalf("ordinary open: %v", err)
			}
			if !strings.Contains(dump, "Requirements:\tonline-reencrypt-v2") {
				t.Fatalf("cryptsetup does not show the re-encryption requirement:\n%s", dump)
			}
			resumed++
			dev = openDev(t, p)
			r, err = Resume(context.Background(), dev, nil, luksCreds, volume.Options{})
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			err = Run(context.Background(), r, RunOptions{Chunk: chunk})
			dev.Close()
			if err != nil {
				t.Fatalf("resumed run: %v", err)
			}
			got, key, err = sumOf(t, p, luksCreds, volume.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != sum || bytes.Equal(key, key0) {
				t.Fatalf("after the resumed run: data differs (%v) or the key is the old one", got != sum)
			}
		})
	}
}

// TestLUKS2FinishWipesProtection re-encrypts LUKS2 volumes in 1 MiB
// chunks with each resilience: afterwards no 4 KiB block of the old
// ciphertext (which a journal copies into the reencrypt keyslot's area)
// is left anywhere in the header, Finish having wiped what the run wrote
// there.
func TestLUKS2FinishWipesProtection(t *testing.T) {
	for _, res := range []volume.Resilience{volume.ResilienceChecksum, volume.ResilienceJournal} {
		t.Run(string(res), func(t *testing.T) {
			p, _ := newLUKS(t, 20<<20, luksCreds, luks.CreateOptions{})
			off := dataOffset(t, p, luksCreds, volume.Options{})
			img, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			old := map[[32]byte]bool{}
			for b := off; b+4096 <= int64(len(img)); b += 4096 {
				old[sha256.Sum256(img[b:b+4096])] = true
			}
			reencrypt(t, p, luksCreds, Options{Resilience: res}, 1<<20)
			if img, err = os.ReadFile(p); err != nil {
				t.Fatal(err)
			}
			for b := int64(0); b < off; b += 4096 {
				if old[sha256.Sum256(img[b:b+4096])] {
					t.Fatalf("the header keeps a block of the old ciphertext at %d", b)
				}
			}
		})
	}
}
