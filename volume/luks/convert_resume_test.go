package luks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestConvertResumesStopped stops both conversions after every write and
// takes what is left through LUKS2 and back, as the next re-encryption
// run of a LUKS1 volume does: converting a LUKS1 header a stop left must
// not be refused (its free keyslots moved up to the data: "the keyslots
// end at 2097152") nor put the keyslots 28 KiB further on (drifting each
// time until the conversion back finds no room), but give the LUKS2
// keyslot areas of the uninterrupted conversion, and the conversion back
// the original LUKS1 keyslot places. Layouts: cryptsetup's luksFormat
// one for 512-bit keys (keyslots ending 28 KiB before the data, no slack)
// and for several keyslots in use.
func TestConvertResumesStopped(t *testing.T) {
	for _, c := range []struct {
		cipher string
		bits   int
		passes map[int]string
	}{
		{"aes-xts-plain64", 512, map[int]string{0: "zero"}},
		{"aes-xts-plain64", 512, map[int]string{1: "one"}},
		{"aes-xts-plain64", 256, map[int]string{0: "zero", 3: "three", 6: "six"}},
		{"aes-xts-plain64", 512, map[int]string{1: "one", 4: "four", 5: "five"}},
	} {
		t.Run(fmt.Sprintf("%s-%d-slots-%v", c.cipher, c.bits, keysOf(c.passes)), func(t *testing.T) {
			luks1, _ := newImage(t, 4<<20)
			cryptvolLUKS1(c.cipher, c.bits)(t, luks1, c.passes)
			luks2 := testdata.CopyFile(t, luks1)
			if err := convertFile(t, luks2, "luks2"); err != nil {
				t.Fatal(err)
			}
			wantSlots, wantAreas := slotPlaces(t, luks1), slotPlaces(t, luks2)
			for _, tc := range []struct{ name, base, to string }{
				{"luks1-to-luks2", luks1, "luks2"},
				{"luks2-to-luks1", luks2, "luks1"},
			} {
				full := &crashDevice{Device: openDev(t, testdata.CopyFile(t, tc.base)), allowed: 1 << 30}
				if err := Convert(context.Background(), full, tc.to, ConvertOptions{}); err != nil {
					t.Fatal(err)
				}
				for k := 0; k < full.done; k++ {
					name := fmt.Sprintf("%s/stopped-after-%d-of-%d-writes", tc.name, k, full.done)
					p := testdata.CopyFile(t, tc.base)
					if err := Convert(context.Background(), &crashDevice{Device: openDev(t, p), allowed: k}, tc.to, ConvertOptions{}); !errors.Is(err, errCrash) {
						t.Fatalf("%s: got %v, want the simulated crash", name, err)
					}
					err := convertFile(t, p, "luks2")
					if err != nil && !errors.Is(err, ErrAlreadyType) {
						t.Fatalf("%s: converting what the stop left to LUKS2: %v", name, err)
					}
					converted := err == nil
					if got := slotPlaces(t, p); !reflect.DeepEqual(got, wantAreas) {
						t.Fatalf("%s: LUKS2 keyslot areas %v, the uninterrupted conversion's %v", name, got, wantAreas)
					}
					if converted {
						// (A stop after the LUKS2 header landed leaves
						// the copies the wipe had still to overwrite.)
						noStaleCopies(t, name, p, wantAreas)
					}
					if err := convertFile(t, p, "luks1"); err != nil {
						t.Fatalf("%s: converting back to LUKS1: %v", name, err)
					}
					if got := slotPlaces(t, p); !reflect.DeepEqual(got, wantSlots) {
						t.Fatalf("%s: LUKS1 keyslots at %v, at first %v", name, got, wantSlots)
					}
				}
			}
		})
	}
}

func keysOf(m map[int]string) []int {
	var out []int
	for i := range luks1NumKeys {
		if _, ok := m[i]; ok {
			out = append(out, i)
		}
	}
	return out
}

// slotPlaces is where p's header puts its keyslots: every LUKS1 keyslot's
// offset (in use or not, as "i" or "i free"), or the LUKS2 areas.
func slotPlaces(t *testing.T, p string) map[string]int64 {
	t.Helper()
	d := openDev(t, p)
	defer d.Close()
	l, err := load(d, "luks")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	if l.v1 != nil {
		for i, s := range l.v1.Slots {
			id := fmt.Sprint(i)
			if s.Active != luks1SlotEnabled {
				id += " free"
			}
			out[id] = int64(s.Offset) * 512
		}
		return out
	}
	areas, err := l.v2.meta.areas()
	if err != nil {
		t.Fatal(err)
	}
	for id, a := range areas {
		out[id] = int64(a.off)
	}
	return out
}

// noStaleCopies requires the key material of each LUKS2 keyslot of p (its
// first 4 KiB) to be nowhere else in the header: copies a stopped
// conversion made on the way are wiped.
func noStaleCopies(t *testing.T, name, p string, areas map[string]int64) {
	t.Helper()
	img := readHead(t, p, 4<<20)
	for id, off := range areas {
		m := img[off : off+4096]
		for at := 0; ; {
			i := bytes.Index(img[at:], m)
			if i < 0 {
				break
			}
			if int64(at+i) != off {
				t.Fatalf("%s: keyslot %s's material (at %d) is also at %d", name, id, off, at+i)
			}
			at += i + 1
		}
	}
}
