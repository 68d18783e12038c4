package serpent

import (
	"os"
	"testing"
)

// TestNEONSelected fails when the run says the CPU has NEON
// (CRYPTVOL_EXPECT_NEON=1, set by .ci/run's qemu -cpu cortex-a7 stage) but
// the NEON kernel is not the one in use, so that stage cannot pass on the
// portable code alone.
func TestNEONSelected(t *testing.T) {
	if os.Getenv("CRYPTVOL_EXPECT_NEON") != "1" {
		t.Skip("CRYPTVOL_EXPECT_NEON is not set: nothing to check")
	}
	if impl != implNEON {
		t.Fatalf("implementation %q, want neon", impl.name())
	}
}
