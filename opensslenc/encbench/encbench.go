// Package encbench measures `cryptvol enc` against `openssl enc` on the
// same data in the same run: the seed router test (`openssl enc
// -aes-256-cbc -nosalt -k ...` on a 50 MB file, timed per cipher) as one
// call.
//
// Both programs read the same file from the page cache and write to the
// null device, with raw keys (-K/-iv, so no key derivation is timed). The
// figures are bytes per CPU second (user+system), not per wall second,
// because the machines this runs on are shared: a descheduled process
// loses wall time but not CPU time. cryptvol is measured in this process
// (its CPU time across all threads); openssl is a child process whose
// CPU time comes from wait4, minus the CPU time of an openssl run on empty
// input with the same arguments (its start-up: loading providers and
// self-tests), so only the encryption is compared. Each figure is the
// median of several rounds, with their min–max.
package encbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/internal/stats"
	"github.com/cryptvol/cryptvol/opensslenc"
)

// DefaultCiphers are the ciphers of the seed experiment.
var DefaultCiphers = []string{"aes-128-cbc", "aes-256-cbc", "aes-128-ctr", "aes-256-ctr", "chacha20", "rc4"}

// DefaultSize is the seed experiment's file size.
const DefaultSize = 50 << 20

// Options say what to measure.
type Options struct {
	// Size of the data in bytes; 0 means DefaultSize.
	Size int64
	// Ciphers by OpenSSL name; nil means DefaultCiphers.
	Ciphers []string
	// VsOpenSSL also runs the openssl binary (OpenSSL, default "openssl").
	VsOpenSSL bool
	OpenSSL   string
	// Rounds per figure (the median reported, with the range); 0 means 3.
	Rounds int
	// Dir holds the temporary data files; "" means os.TempDir().
	Dir string
	// Progress, if set, is called after each cipher.
	Progress func(done, total int)
}

// Result is one cipher's figures in bytes per CPU second (per wall second
// when CPUTime is false); the OpenSSL fields are 0 when not measured.
type Result struct {
	Cipher            string  `json:"name"`
	EncryptBPS        float64 `json:"encrypt_bps"`
	DecryptBPS        float64 `json:"decrypt_bps"`
	OpenSSLEncryptBPS float64 `json:"openssl_encrypt_bps,omitempty"`
	OpenSSLDecryptBPS float64 `json:"openssl_decrypt_bps,omitempty"`
	// OpenSSLStartup is the CPU seconds of openssl's empty run, which
	// were subtracted from its figures.
	OpenSSLStartup float64 `json:"openssl_startup_seconds,omitempty"`
	// The four speeds above are medians over the rounds (before issue 28:
	// the best round); these are their ranges, the slowest and fastest
	// round (0 where not measured).
	EncryptMinBPS        float64 `json:"encrypt_min_bps"`
	EncryptMaxBPS        float64 `json:"encrypt_max_bps"`
	DecryptMinBPS        float64 `json:"decrypt_min_bps"`
	DecryptMaxBPS        float64 `json:"decrypt_max_bps"`
	OpenSSLEncryptMinBPS float64 `json:"openssl_encrypt_min_bps,omitempty"`
	OpenSSLEncryptMaxBPS float64 `json:"openssl_encrypt_max_bps,omitempty"`
	OpenSSLDecryptMinBPS float64 `json:"openssl_decrypt_min_bps,omitempty"`
	OpenSSLDecryptMaxBPS float64 `json:"openssl_decrypt_max_bps,omitempty"`
}

// Report is the whole run.
type Report struct {
	Size    int64    `json:"size"`
	Rounds  int      `json:"rounds"`
	CPUTime bool     `json:"cpu_time"`
	OpenSSL string   `json:"openssl_version,omitempty"`
	Results []Result `json:"ciphers"`
}

// ErrNoOpenSSL: VsOpenSSL was asked for but the binary is not there.
var ErrNoOpenSSL = errors.New("openssl not found")

// Run measures every cipher in both directions.
func Run(ctx context.Context, o Options) (*Report, error) {
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.Size < 0 {
		return nil, fmt.Errorf("size %d < 0", o.Size)
	}
	if o.Ciphers == nil {
		o.Ciphers = DefaultCiphers
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.OpenSSL == "" {
		o.OpenSSL = "openssl"
	}
	ciphers := make([]*opensslenc.Cipher, len(o.Ciphers))
	for i, n := range o.Ciphers {
		c, err := opensslenc.LookupCipher(n)
		if err != nil {
			return nil, err
		}
		ciphers[i] = c
	}
	cpu := cputime.Supported()
	r := &Report{Size: o.Size, Rounds: o.Rounds, CPUTime: cpu}
	if o.VsOpenSSL {
		path, err := exec.LookPath(o.OpenSSL)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoOpenSSL, err)
		}
		o.OpenSSL = path
		v, err := exec.CommandContext(ctx, path, "version").Output()
		if err != nil {
			return nil, fmt.Errorf("openssl version: %w", err)
		}
		r.OpenSSL = string(bytes.TrimSpace(v))
	}

	dir, err := os.MkdirTemp(o.Dir, "cryptvol-bench-enc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	plain := filepath.Join(dir, "plain")
	if err := writeRandom(plain, o.Size); err != nil {
		return nil, err
	}
	for i, c := range ciphers {
		res, err := measureCipher(ctx, o, c, dir, plain)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		r.Results = append(r.Results, res)
		if o.Progress != nil {
			o.Progress(i+1, len(ciphers))
		}
	}
	return r, nil
}

func measureCipher(ctx context.Context, o Options, c *opensslenc.Cipher, dir, plain string) (Result, error) {
	res := Result{Cipher: c.Name}
	key, iv := make([]byte, c.KeySize), make([]byte, c.IVSize)
	rand.Read(key)
	rand.Read(iv)
	p := opensslenc.Params{Cipher: c, Key: key, IV: iv}
	sealed := filepath.Join(dir, "sealed")
	defer os.Remove(sealed)
	if err := runOurs(ctx, p, false, plain, sealed); err != nil {
		return res, err
	}
	for _, decrypt := range []bool{false, true} {
		in := plain
		if decrypt {
			in = sealed
		}
		var rates []float64
		for range o.Rounds {
			s, err := timeOurs(ctx, p, decrypt, in)
			if err != nil {
				return res, err
			}
			rates = append(rates, float64(o.Size)/s)
		}
		if decrypt {
			res.DecryptBPS, res.DecryptMinBPS, res.DecryptMaxBPS = stats.MedianRange(rates)
		} else {
			res.EncryptBPS, res.EncryptMinBPS, res.EncryptMaxBPS = stats.MedianRange(rates)
		}
	}
	if !o.VsOpenSSL {
		return res, nil
	}
	args := []string{"enc", "-" + c.Name, "-K", hex.EncodeToString(key)}
	if c.IVSize > 0 {
		args = append(args, "-iv", hex.EncodeToString(iv))
	}
	if c.Legacy {
		args = append(args, "-provider", "legacy", "-provider", "default")
	}
	startup := 0.0
	for i := range o.Rounds {
		s, err := timeOpenSSL(ctx, o.OpenSSL, append(args, "-in", os.DevNull, "-out", os.DevNull))
		if err != nil {
			return res, err
		}
		if i == 0 || s < startup {
			startup = s
		}
	}
	res.OpenSSLStartup = startup
	for _, decrypt := range []bool{false, true} {
		a := append(append([]string(nil), args...), "-in", plain, "-out", os.DevNull)
		if decrypt {
			a = append(append([]string(nil), args...), "-d", "-in", sealed, "-out", os.DevNull)
		}
		var rates []float64
		for range o.Rounds {
			s, err := timeOpenSSL(ctx, o.OpenSSL, a)
			if err != nil {
				return res, err
			}
			// A run cannot take less than the start-up it includes; keep
			// at least a microsecond so a tiny size gives a figure.
			rates = append(rates, float64(o.Size)/max(s-startup, 1e-6))
		}
		if decrypt {
			res.OpenSSLDecryptBPS, res.OpenSSLDecryptMinBPS, res.OpenSSLDecryptMaxBPS = stats.MedianRange(rates)
		} else {
			res.OpenSSLEncryptBPS, res.OpenSSLEncryptMinBPS, res.OpenSSLEncryptMaxBPS = stats.MedianRange(rates)
		}
	}
	return res, nil
}

// timeOurs runs one cryptvol encryption or decryption of the file to the
// null device and returns the CPU seconds (wall seconds without a CPU
// clock) it took.
func timeOurs(ctx context.Context, p opensslenc.Params, decrypt bool, in string) (float64, error) {
	cpu0, cpu := cputime.ProcessSeconds(), cputime.Supported()
	t0 := time.Now()
	if err := runOurs(ctx, p, decrypt, in, os.DevNull); err != nil {
		return 0, err
	}
	if cpu {
		cpu1 := cputime.ProcessSeconds()
		return max(cpu1-cpu0, 1e-6), nil
	}
	return max(time.Since(t0).Seconds(), 1e-6), nil
}

func runOurs(ctx context.Context, p opensslenc.Params, decrypt bool, in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	var op *opensslenc.Operation
	if decrypt {
		op, err = opensslenc.NewDecryption(ctx, p, dst, src)
	} else {
		op, err = opensslenc.NewEncryption(ctx, p, dst, src)
	}
	if err == nil {
		err = op.Run(ctx)
		op.Close()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}

// timeOpenSSL runs openssl and returns its CPU seconds (wall seconds
// where the system does not report CPU time).
func timeOpenSSL(ctx context.Context, path string, args []string) (float64, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("openssl %v: %v: %s", args, err, bytes.TrimSpace(errb.Bytes()))
	}
	wall := time.Since(t0).Seconds()
	if cpu := cputime.Supported(); !cpu {
		return wall, nil
	}
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), nil
}

func writeRandom(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, rand.Reader, size); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
