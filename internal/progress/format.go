package progress

import (
	"fmt"
	"strconv"
)

// FormatSize prints a byte count in binary units with one decimal
// ("1.5 MiB"), or exactly in bytes below 1 KiB.
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", f, units[i])
}

// GroupDigits writes 1234567 as 1,234,567.
func GroupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// FormatSeconds prints a duration in seconds, or milliseconds below 0.1 s.
func FormatSeconds(s float64) string {
	if s < 0.1 {
		return strconv.FormatFloat(s*1000, 'f', 1, 64) + " ms"
	}
	return strconv.FormatFloat(s, 'f', 2, 64) + " s"
}
