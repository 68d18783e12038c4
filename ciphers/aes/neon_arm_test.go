package aes

import (
	"os"
	"testing"
)

// TestNEONSelected fails when the run says the CPU has NEON
// (CRYPTVOL_EXPECT_NEON=1, set by .ci/run's qemu -cpu cortex-a7 stage) but
// New does not take the NEON kernels, so that stage cannot pass on the
// portable code alone.
func TestNEONSelected(t *testing.T) {
	if os.Getenv("CRYPTVOL_EXPECT_NEON") != "1" {
		t.Skip("CRYPTVOL_EXPECT_NEON is not set: nothing to check")
	}
	if defaultImpl != implNEON {
		t.Fatalf("implementation %s, want %s", defaultImpl, implNEON)
	}
}

// TestTablesOnlyWhenAsked: the table path, which is not constant-time, is
// the default only when CRYPTVOL_AES_TABLES=1 chose it.
func TestTablesOnlyWhenAsked(t *testing.T) {
	if got := defaultImpl == implTable; got != (os.Getenv("CRYPTVOL_AES_TABLES") == "1") {
		t.Fatalf("default %s with CRYPTVOL_AES_TABLES=%q", defaultImpl, os.Getenv("CRYPTVOL_AES_TABLES"))
	}
}
