package reencrypt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
)

// TestLUKS1CrashAnywhere stops the re-encryption of a LUKS1 volume (which
// goes to LUKS2 for the run and back at the end) after every number of
// its writes, tearing the one it stops in, then does what the next
// `cryptvol reencrypt` does: start, or resume the re-encryption in
// progress. That must complete, the data intact under a new key, and the
// volume must be LUKS1 again (for cryptsetup too), wherever the first run
// stopped: in the conversion to LUKS2, before the re-encryption was
// recorded, in the data pass, in the final commit or in the conversion
// back. The layout is cryptsetup's default one for a 512-bit key, whose
// keyslots end 28 KiB before the data: no room for a header whose free
// keyslots a stopped conversion moved (the kill campaign's "cannot
// convert to LUKS2: the keyslots end at 2097152").
func TestLUKS1CrashAnywhere(t *testing.T) {
	base, sum := newLUKS(t, 4<<20, luksCreds, luks.CreateOptions{Type: "luks1", KeySize: 512})
	_, key0, _ := sumOf(t, base, luksCreds, volume.Options{})
	const chunk = 512 << 10
	o := Options{Cipher: "serpent-xts-plain64"}
	countDev := openDev(t, testdata.CopyFile(t, base))
	count := &crashDevice{Device: countDev, allowed: 1 << 30}
	r, err := Start(context.Background(), count, nil, luksCreds, o)
	if err == nil {
		err = Run(context.Background(), r, RunOptions{Chunk: chunk})
	}
	countDev.Close()
	if err != nil {
		t.Fatal(err)
	}
	total := count.done
	_, lerr := exec.LookPath("cryptsetup")
	haveCryptsetup := lerr == nil
	if !haveCryptsetup {
		t.Log("NOT CHECKED: cryptsetup's luksDump of the results (cryptsetup is not installed)")
	}
	stages := map[string]int{}
	failed := 0
	for k := 0; k < total; k++ {
		name := fmt.Sprintf("after %d of %d writes", k, total)
		p := testdata.CopyFile(t, base)
		dev := openDev(t, p)
		cd := &crashDevice{Device: dev, allowed: k}
		r, err := Start(context.Background(), cd, nil, luksCreds, o)
		if err == nil {
			err = Run(context.Background(), r, RunOptions{Chunk: chunk})
		}
		dev.Close()
		if !errors.Is(err, errCrash) {
			t.Fatalf("%s: got %v, want the simulated crash", name, err)
		}
		stage := stopStage(t, p)
		stages[stage]++
		if err := nextRun(p, o, chunk); err != nil {
			if failed++; failed <= 5 {
				t.Errorf("%s (left %s): the next run: %v", name, stage, err)
			}
			continue
		}
		got, key, err := sumOf(t, p, luksCreds, volume.Options{Type: "luks1"})
		if err != nil {
			if failed++; failed <= 5 {
				t.Errorf("%s (left %s): after the next run it does not open as LUKS1: %v", name, stage, err)
			}
			continue
		}
		if got != sum || bytes.Equal(key, key0) {
			t.Fatalf("%s (left %s): after the next run the data differs (%v) or the key is the old one", name, stage, got != sum)
		}
		if haveCryptsetup {
			if out, ok := cryptsetup(t, "", "luksDump", p); !ok || !strings.Contains(out, "Version:       \t1") {
				t.Fatalf("%s: not LUKS1 for cryptsetup:\n%s", name, out)
			}
		}
	}
	t.Logf("%d stops (%v), %d not completed as LUKS1 by the next run", total, stages, failed)
}

// nextRun is the next `cryptvol reencrypt` of p: it starts, or resumes
// the re-encryption in progress, and runs it to the end.
func nextRun(p string, o Options, chunk int64) error {
	dev, err := volume.OpenDevice(p, false)
	if err != nil {
		return err
	}
	defer dev.Close()
	r, err := Start(context.Background(), dev, nil, luksCreds, o)
	if errors.Is(err, volume.ErrReencrypting) {
		r, err = Resume(context.Background(), dev, nil, luksCreds, volume.Options{})
	}
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer r.Close()
	if err := Run(context.Background(), r, RunOptions{Chunk: chunk}); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	return nil
}

// stopStage names what a stop left, for the report.
func stopStage(t *testing.T, p string) string {
	if _, _, err := sumOf(t, p, luksCreds, volume.Options{Type: "luks1"}); err == nil {
		return "luks1"
	}
	_, _, err := sumOf(t, p, luksCreds, volume.Options{})
	switch {
	case err == nil:
		return "luks2"
	case errors.Is(err, volume.ErrReencrypting):
		return "reencrypting"
	}
	return "unopenable"
}
