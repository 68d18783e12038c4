package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseSize reads a byte count the way the command line writes sizes: a
// plain number is bytes; a K, M, G or T suffix (any case, optionally
// followed by "B" or "iB") multiplies by 2^10, 2^20, 2^30 or 2^40, as
// TrueCrypt and VeraCrypt count (their "MB" is 2^20 bytes). So "4096",
// "100K", "5M", "5MiB" and "1g" are all valid; fractions, negative numbers
// and sizes of 2^63 bytes or more are not.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRight(t, "KkMmGgTtIiBb")
	unit := strings.ToUpper(t[len(num):])
	shift := 0
	switch unit {
	case "", "B":
	case "K", "KB", "KIB":
		shift = 10
	case "M", "MB", "MIB":
		shift = 20
	case "G", "GB", "GIB":
		shift = 30
	case "T", "TB", "TIB":
		shift = 40
	default:
		return 0, fmt.Errorf("invalid size %q: unit %q is not K, M, G or T", s, t[len(num):])
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || num == "" || num[0] == '+' || num[0] == '-' {
		return 0, fmt.Errorf("invalid size %q: want a whole number of bytes, optionally with K, M, G or T", s)
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return n << shift, nil
}
