package luks

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
)

// TestUnlockSaysWhatItTries: a LUKS keyslot can take seconds, so the
// unlock tells Options.Progress each keyslot as it starts deriving, with
// its KDF and cost (issue 28, item 5: a try over 2 s says what it
// tries). The line names what cryptsetup luksDump shows of the slot.
func TestUnlockSaysWhatItTries(t *testing.T) {
	for _, c := range []struct {
		typ, kdf string
		want     string
	}{
		{"luks1", "pbkdf2", "LUKS1 keyslot 0 (PBKDF2-sha256, "},
		{"luks2", "pbkdf2", "LUKS2 keyslot 0 (PBKDF2-sha256, "},
		{"luks2", "argon2id", "LUKS2 keyslot 0 (argon2id, 1 MiB, time cost 4, threads 1)"},
	} {
		t.Run(c.typ+"-"+c.kdf, func(t *testing.T) {
			p, dev := newImage(t, 20<<20)
			if _, err := Create(context.Background(), dev, CreateOptions{Type: c.typ, KDF: fastKDF(c.kdf), Quick: true}, pw("right")); err != nil {
				t.Fatal(err)
			}
			dev.Close()
			var mu sync.Mutex
			var tried []string
			o := volume.Options{ReadOnly: true, Progress: func(s string) {
				mu.Lock()
				defer mu.Unlock()
				tried = append(tried, s)
			}}
			v, err := openPath(t, p, pw("right"), o)
			if err != nil {
				t.Fatal(err)
			}
			v.Close()
			if len(tried) != 1 || !strings.HasPrefix(tried[0], c.want) {
				t.Errorf("right password: progress %q, want one line starting %q", tried, c.want)
			}
			tried = nil
			if _, err := openPath(t, p, pw("wrong"), o); !errors.Is(err, volume.ErrWrongPassword) {
				t.Fatalf("wrong password: %v", err)
			}
			if len(tried) != 1 || !strings.HasPrefix(tried[0], c.want) {
				t.Errorf("wrong password: progress %q, want one line starting %q", tried, c.want)
			}
		})
	}
}
