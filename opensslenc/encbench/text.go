package encbench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"

	"github.com/cryptvol/cryptvol/internal/progress"
)

// The report as text, for `cryptvol benchmark enc --format table|csv`;
// vsOpenSSL adds openssl's rows (and the table its ratios).

func bps(f float64) string { return strconv.FormatFloat(f, 'f', 0, 64) }

// WriteCSV writes a row per cipher and program. The range columns come
// after the old ones.
func (r *Report) WriteCSV(w io.Writer, vsOpenSSL bool) error {
	c := csv.NewWriter(w)
	c.Write([]string{"cipher", "program", "encrypt_bps", "decrypt_bps", "encrypt_min_bps", "encrypt_max_bps", "decrypt_min_bps", "decrypt_max_bps"})
	for _, x := range r.Results {
		c.Write([]string{x.Cipher, "cryptvol", bps(x.EncryptBPS), bps(x.DecryptBPS),
			bps(x.EncryptMinBPS), bps(x.EncryptMaxBPS), bps(x.DecryptMinBPS), bps(x.DecryptMaxBPS)})
		if vsOpenSSL {
			c.Write([]string{x.Cipher, "openssl", bps(x.OpenSSLEncryptBPS), bps(x.OpenSSLDecryptBPS),
				bps(x.OpenSSLEncryptMinBPS), bps(x.OpenSSLEncryptMaxBPS), bps(x.OpenSSLDecryptMinBPS), bps(x.OpenSSLDecryptMaxBPS)})
		}
	}
	c.Flush()
	return c.Error()
}

// WriteTable writes how the figures were taken, then each cipher's
// encryption and decryption speed with its min–max.
func (r *Report) WriteTable(w io.Writer, vsOpenSSL bool) {
	clock := "per CPU second (user+system)"
	if !r.CPUTime {
		clock = "per wall-clock second (no CPU clock here)"
	}
	fmt.Fprintf(w, "enc: %s of random data, file to the null device, raw -K/-iv keys; medians of %d rounds (min–max); %s; 1 MB = 2^20 bytes\n",
		progress.FormatSize(r.Size), r.Rounds, clock)
	if vsOpenSSL {
		fmt.Fprintf(w, "openssl: %s; its start-up (an empty run with the same options) is subtracted\n", r.OpenSSL)
	}
	fmt.Fprintln(w)
	width := len("Cipher")
	for _, x := range r.Results {
		width = max(width, len(x.Cipher))
	}
	rate := func(bps float64) string { return progress.FormatRate(bps) + "/s" }
	span := func(lo, hi float64) string {
		return "(" + progress.FormatRate(lo) + " – " + progress.FormatRate(hi) + ")"
	}
	fmt.Fprintf(w, "%-*s  %-8s  %12s %-19s  %12s\n", width, "Cipher", "Program", "Encryption", "", "Decryption")
	for _, x := range r.Results {
		fmt.Fprintf(w, "%-*s  %-8s  %12s %-19s  %12s %s\n", width, x.Cipher, "cryptvol", rate(x.EncryptBPS), span(x.EncryptMinBPS, x.EncryptMaxBPS), rate(x.DecryptBPS), span(x.DecryptMinBPS, x.DecryptMaxBPS))
		if vsOpenSSL {
			fmt.Fprintf(w, "%-*s  %-8s  %12s %-19s  %12s %s\n", width, "", "openssl", rate(x.OpenSSLEncryptBPS), span(x.OpenSSLEncryptMinBPS, x.OpenSSLEncryptMaxBPS), rate(x.OpenSSLDecryptBPS), span(x.OpenSSLDecryptMinBPS, x.OpenSSLDecryptMaxBPS))
			fmt.Fprintf(w, "%-*s  %-8s  %11.2fx %-19s  %11.2fx\n", width, "", "ratio",
				x.EncryptBPS/x.OpenSSLEncryptBPS, "", x.DecryptBPS/x.OpenSSLDecryptBPS)
		}
	}
}
