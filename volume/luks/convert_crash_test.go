package luks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestConvertCrashSafeSeveralKeyslots interrupts both conversions of
// volumes with several keyslots in use (0, 3 and 6; 2 and 7; 1, 4 and 5,
// with 128- to 512-bit keys) after every write and inside every write: the keyslots move one by one to cryptsetup's places (issue
// 29 item 11), and at every moment every passphrase must still open the
// volume with its volume key, in cryptvol and (without the cut-short
// write's volume lock) in cryptsetup.
func TestConvertCrashSafeSeveralKeyslots(t *testing.T) {
	for _, c := range []struct {
		cipher string
		bits   int
		passes map[int]string
	}{
		{"aes-xts-plain64", 256, map[int]string{0: "zero", 3: "three", 6: "six"}},
		{"aes-cbc-essiv:sha256", 128, map[int]string{2: "two", 7: "seven"}},
		{"aes-xts-plain64", 512, map[int]string{1: "one", 4: "four", 5: "five"}},
	} {
		t.Run(fmt.Sprintf("%s-%d", c.cipher, c.bits), func(t *testing.T) {
			crashEveryWrite(t, c.cipher, c.bits, c.passes)
		})
	}
}

func crashEveryWrite(t *testing.T, cipher string, bits int, passes map[int]string) {
	luks1, _ := newImage(t, 4<<20)
	cryptvolLUKS1(cipher, bits)(t, luks1, passes)
	luks2 := testdata.CopyFile(t, luks1)
	if err := convertFile(t, luks2, "luks2"); err != nil {
		t.Fatal(err)
	}
	key := masterKeyOf(t, luks1, pw(firstPass(passes)), volume.Options{})
	for _, tc := range []struct{ name, base, to string }{
		{"luks1-to-luks2", luks1, "luks2"},
		{"luks2-to-luks1", luks2, "luks1"},
	} {
		full := &crashDevice{Device: openDev(t, testdata.CopyFile(t, tc.base)), allowed: 1 << 30}
		if err := Convert(context.Background(), full, tc.to, ConvertOptions{}); err != nil {
			t.Fatal(err)
		}
		for k := 0; k <= full.done; k++ {
			for _, torn := range []bool{false, true} {
				name := fmt.Sprintf("%s/after-%d-of-%d-writes/torn=%v", tc.name, k, full.done, torn)
				p := testdata.CopyFile(t, tc.base)
				var d volume.Device = &crashDevice{Device: openDev(t, p), allowed: k}
				if torn {
					d = &tornDevice{Device: openDev(t, p), allowed: k}
				}
				err := Convert(context.Background(), d, tc.to, ConvertOptions{})
				if k < full.done && !errors.Is(err, errCrash) {
					t.Fatalf("%s: got %v, want the simulated crash", name, err)
				}
				for slot, pass := range passes {
					v, err := openPath(t, p, pw(pass), volume.Options{ReadOnly: true})
					if err != nil {
						t.Fatalf("%s: keyslot %d does not open: %v", name, slot, err)
					}
					got := v.MasterKey()
					v.Close()
					if !bytes.Equal(got, key) {
						t.Fatalf("%s: keyslot %d gives another volume key", name, slot)
					}
					if out, ok := cryptsetup(t, pass, "open", "--test-passphrase", "--key-slot", fmt.Sprint(slot), "--key-file", "-", p); !ok {
						t.Fatalf("%s: cryptvol opens keyslot %d, cryptsetup does not:\n%s", name, slot, out)
					}
				}
			}
		}
	}
}
