package testdata

import (
	"testing"

	"github.com/cryptvol/cryptvol/internal/oracle"
)

// VeraCrypt returns the oracle build of the given version (oracle.VeraCrypt12624
// or oracle.VeraCrypt1259), or skips the test saying what is missing.
func VeraCrypt(t testing.TB, version string) *oracle.VeraCrypt {
	t.Helper()
	vc, err := oracle.Find(version)
	if err != nil {
		t.Skipf("VeraCrypt %s oracle unavailable: %v", version, err)
	}
	return vc
}
