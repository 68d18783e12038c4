package filesystem

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateName: each filesystem's rule in its own unit. 128 "é" are
// 256 bytes but 128 UTF-16 units; 128 "😀" are 256 UTF-16 units. The
// put tests in cmd/cryptvol check the same names against the real
// filesystems (stored ones pass their checkers).
func TestValidateName(t *testing.T) {
	b255, b256 := strings.Repeat("b", 255), strings.Repeat("b", 256)
	e128, s127, s128 := strings.Repeat("é", 128), strings.Repeat("😀", 127), strings.Repeat("😀", 128)
	ok := map[string][]string{
		"vfat":  {b255, e128, s127, "a b", "ü.txt", "CONSOLE", "con2", "COM10", "LPT", "xcon", "aux_.c"},
		"exfat": {b255, e128, s127, "a b", "nul_", "com10.txt"},
		"ext4":  {b255, "a:b", "a?", "trailing.", "\xff\xfe", "CON", "aux.c", "nul"},
		"ntfs":  {b255, e128, s127, "a:b", "trailing.", "Console", "prn1"},
	}
	bad := map[string][]string{
		"vfat":  {b256, s128, "a:b", "a?", "a*", "trailing.", "trailing ", "a\x01", "", ".", "..", "CON", "con.txt", "Aux.tar.gz", "nul .c", "COM1", "lpt9.log", "COM¹"},
		"exfat": {b256, s128, "a:b", "a\\b", "trailing.", "a\x1f", "", "..", "\xff", "prn", "LPT0.x"},
		"ext4":  {b256, e128, s128, "a/b", "a\x00b", "", ".", ".."},
		"ntfs":  {b256, s128, "a/b", "a\x00b", "\xff\xfe", "", ".", "NUL", "com3.bin", "aux."},
	}
	for _, typ := range []string{"vfat", "exfat", "ext4", "ntfs"} {
		for _, n := range ok[typ] {
			if err := ValidateName(typ, n); err != nil {
				t.Errorf("%s refuses %.20q (%d bytes): %v", typ, n, len(n), err)
			}
		}
		for _, n := range bad[typ] {
			if err := ValidateName(typ, n); !errors.Is(err, ErrInvalidName) {
				t.Errorf("%s: ValidateName(%.20q, %d bytes) = %v, want ErrInvalidName", typ, n, len(n), err)
			}
		}
	}
	if err := ValidateName("hfsplus", "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("unknown type: %v", err)
	}
}
