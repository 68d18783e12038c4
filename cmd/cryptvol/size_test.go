package main

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "4096": 4096, "512B": 512, "100K": 100 << 10, "100k": 100 << 10, "5M": 5 << 20,
		"5MiB": 5 << 20, "5mb": 5 << 20, "1G": 1 << 30, "2T": 2 << 40, " 7M ": 7 << 20,
		"8388607T": 8388607 << 40,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "M", "-5M", "+5M", "1.5G", "5X", "5MM", "0x10", "8388608T", "99999999999999999999", "5 M"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}
