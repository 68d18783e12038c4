package aes

import (
	"os"
	"testing"
)

// TestNEONSelected fails when the run masks the AES instructions
// (CRYPTVOL_EXPECT_NEON=1 with GODEBUG=cpu.aes=off, as .ci/run's second
// arm64 stage runs) but New does not take the bitsliced NEON kernels.
func TestNEONSelected(t *testing.T) {
	if os.Getenv("CRYPTVOL_EXPECT_NEON") != "1" {
		t.Skip("CRYPTVOL_EXPECT_NEON is not set: nothing to check")
	}
	if defaultImpl != implNEON {
		t.Fatalf("implementation %s, want %s", defaultImpl, implNEON)
	}
}
