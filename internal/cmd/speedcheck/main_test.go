package main

import "testing"

// TestParsers checks the regular expressions against output lines captured
// from openssl 3.0.19 and botan 2.19 on the CI machine.
func TestParsers(t *testing.T) {
	m := opensslLine.FindStringSubmatch("Doing AES-256-XTS for 2s on 4096 size blocks: 3954494 AES-256-XTS's in 2.00s")
	if m == nil || m[1] != "4096" || m[2] != "3954494" || m[3] != "2.00" {
		t.Errorf("openssl line: %q", m)
	}
	for line, want := range map[string]string{
		"Serpent/XTS encrypt buffer size 4096 bytes: 321.531 MiB/sec 7.66 cycles/byte (643.06 MiB in 2000.00 ms)": "643.06",
		"Twofish/XTS decrypt buffer size 4096 bytes: 369.299 MiB/sec 6.68 cycles/byte (738.60 MiB in 2000.00 ms)": "738.60",
		"Serpent/XTS 55845 key schedule/sec; 0.02 ms/op 14586 cycles/op (2 ops in 0 ms)":                          "",
	} {
		m := botanLine.FindStringSubmatch(line)
		switch {
		case want == "" && m != nil:
			t.Errorf("%q matched: %q", line, m)
		case want != "" && (m == nil || m[1] != want):
			t.Errorf("%q: got %q, want %s", line, m, want)
		}
	}
}
