package chacha20

import (
	"os"
	"testing"
)

// TestNEONSelected fails when the run says the CPU has NEON
// (CRYPTVOL_EXPECT_NEON=1, set by .ci/run's qemu -cpu cortex-a7 stage) but
// the NEON kernel is not in use.
func TestNEONSelected(t *testing.T) {
	if os.Getenv("CRYPTVOL_EXPECT_NEON") != "1" {
		t.Skip("CRYPTVOL_EXPECT_NEON is not set: nothing to check")
	}
	if !haveKernel() {
		t.Fatalf("implementation %q, want the NEON kernel", Implementation())
	}
}
