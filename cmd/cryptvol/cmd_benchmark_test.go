package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/ciphers"
)

// benchCLI runs cryptvol in-process and returns its exit code and output.
func benchCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &app{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

// benchJSON is the documented shape of `benchmark --format json`
// (docs/ARCHITECTURE.md, "Command-line contract"), decoded strictly enough that a
// renamed or retyped field fails.
type benchJSON struct {
	CPU      *string   `json:"cpu"`
	AESHW    *bool     `json:"aes_hw"`
	Buffer   *int      `json:"buffer"`
	Threads  *int      `json:"threads"`
	GOOS     *string   `json:"goos"`
	GOARCH   *string   `json:"goarch"`
	Features *[]string `json:"features"`
	Ciphers  []struct {
		Name       string `json:"name"`
		Mode       string `json:"mode"`
		EncryptBPS int64  `json:"encrypt_bps"`
		DecryptBPS int64  `json:"decrypt_bps"`
		MeanBPS    int64  `json:"mean_bps"`
		SectorSize int    `json:"sector_size"`
	} `json:"ciphers"`
	KDF []struct {
		PRF                 string  `json:"prf"`
		IterationsPerSecond float64 `json:"iterations_per_second"`
	} `json:"kdf"`
}

func TestBenchmarkJSON(t *testing.T) {
	code, out, errOut := benchCLI(t, "benchmark", "--format", "json", "--buffer", "4096", "--threads", "1", "--time", "10ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r benchJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not the documented JSON: %v\n%s", err, out)
	}
	if r.CPU == nil || r.AESHW == nil || r.GOOS == nil || r.GOARCH == nil || r.Features == nil {
		t.Errorf("missing platform fields: %s", out)
	}
	if r.Buffer == nil || *r.Buffer != 4096 || r.Threads == nil || *r.Threads != 1 {
		t.Errorf("buffer/threads wrong: %s", out)
	}
	if len(r.Ciphers) != 17 {
		t.Fatalf("%d cipher entries, want 15 XTS chains and 2 Adiantum rows", len(r.Ciphers))
	}
	seen := map[string]bool{}
	for _, c := range r.Ciphers {
		seen[c.Name] = true
		mode, ss := "xts", 512
		if strings.HasPrefix(c.Name, "Adiantum-") {
			mode, ss = "adiantum", 4096
		}
		if c.Mode != mode || c.SectorSize != ss || c.EncryptBPS <= 0 || c.DecryptBPS <= 0 || c.MeanBPS <= 0 {
			t.Errorf("bad entry %+v", c)
		}
	}
	for _, c := range ciphers.Chains() {
		if !seen[c.Name] {
			t.Errorf("no entry for %s", c.Name)
		}
	}
	if !seen["Adiantum-XChaCha12"] || !seen["Adiantum-XChaCha20"] {
		t.Error("no Adiantum entries")
	}
	if len(r.KDF) != 0 {
		t.Errorf("cipher run has kdf entries: %+v", r.KDF)
	}
}

func TestBenchmarkKDFJSON(t *testing.T) {
	code, out, errOut := benchCLI(t, "benchmark", "kdf", "--format", "json", "--time", "10ms")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var r benchJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not the documented JSON: %v\n%s", err, out)
	}
	got := map[string]float64{}
	for _, k := range r.KDF {
		got[k.PRF] = k.IterationsPerSecond
	}
	// Every PBKDF2 PRF of VeraCrypt and TrueCrypt, plus Argon2id.
	for _, prf := range []string{"SHA-512", "Whirlpool", "SHA-256", "BLAKE2s-256", "Streebog", "RIPEMD-160", "SHA-1", "Argon2id"} {
		if v, ok := got[prf]; !ok || v <= 0 {
			t.Errorf("%s: iterations_per_second %v (present %v)", prf, v, ok)
		}
	}
	if len(r.KDF) != 8 || len(r.Ciphers) != 0 {
		t.Errorf("%d kdf and %d cipher entries", len(r.KDF), len(r.Ciphers))
	}
}
