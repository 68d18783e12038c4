package reencrypt

import (
	"context"
	"errors"
	"testing"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// TestStartOrResume: on a volume with no re-encryption, onlyResume finds
// none and a start is a start; a start interrupted before its first chunk
// is picked up by the next call, which warns that new options are
// dropped, and completes with the data intact.
func TestStartOrResume(t *testing.T) {
	p, sum := newVeraCrypt(t, 2<<20, vcCreds, tcrypt.CreateOptions{})
	ctx := context.Background()

	dev := openDev(t, p)
	if _, _, err := StartOrResume(ctx, dev, nil, vcCreds, Options{}, true); !errors.Is(err, ErrNotReencrypting) {
		t.Fatalf("only resume, nothing to resume: %v", err)
	}
	r, resumed, err := StartOrResume(ctx, dev, nil, vcCreds, Options{}, false)
	if err != nil || resumed {
		t.Fatalf("start: resumed %v, %v", resumed, err)
	}
	if got := r.Plan().Completed(); got != 0 {
		t.Fatalf("a new re-encryption has %d bytes done", got)
	}
	r.Close() // interrupted before any chunk
	dev.Close()
	if _, _, err := sumOf(t, p, vcCreds, volume.Options{}); !errors.Is(err, volume.ErrReencrypting) {
		t.Fatalf("an ordinary open of the interrupted volume: %v", err)
	}

	var warned []string
	dev = openDev(t, p)
	r, resumed, err = StartOrResume(ctx, dev, nil, vcCreds, Options{Encryption: "Serpent", Warn: func(m string) { warned = append(warned, m) }}, false)
	if err != nil || !resumed {
		t.Fatalf("second call: resumed %v, %v", resumed, err)
	}
	if len(warned) != 1 {
		t.Fatalf("warnings %q, want the one about the dropped options", warned)
	}
	if err := Run(ctx, r, RunOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := r.Plan().Completed(); got != r.Plan().Size {
		t.Errorf("after the run %d of %d bytes done", got, r.Plan().Size)
	}
	r.Close()
	dev.Close()
	got, _, err := sumOf(t, p, vcCreds, volume.Options{})
	if err != nil || got != sum {
		t.Fatalf("after the resumed run: same data %v, %v", got == sum, err)
	}
}
