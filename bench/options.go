// Package bench is the benchmark engine behind `cryptvol benchmark`: it
// measures XTS encryption and decryption of every VeraCrypt cipher and
// cascade over a buffer, and the speed of every PBKDF2 PRF (and Argon2id)
// that TrueCrypt and VeraCrypt use, and returns the figures as structs with
// the JSON field names of the command-line contract. It prints nothing; the
// CLI formats the results.
//
// Speeds are wall-clock figures, like TrueCrypt's own benchmark: each
// algorithm runs repeatedly for Options.MinTime per direction in 21
// samples, taken in rounds over all algorithms so that each one's samples
// spread over the whole run, and a figure is the median of the samples
// with their min–max, so that a reader sees how noisy the machine was
// (Report.Finish warns when the range exceeds 10% or the machine was
// busy). Three back-to-back runs have every median within the others'
// ranges (.ci/bench-trust checks it).
package bench

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Defaults used when the corresponding Options field is zero.
const (
	// DefaultBuffer is TrueCrypt's default benchmark buffer, 5 MiB.
	DefaultBuffer = 5 << 20
	// DefaultCipherTime is the measuring time per cipher and direction.
	// The 17 rows take about 9 s of CPU time in all on a 2-core EPYC (3.6
	// s with 7 samples back to back), most of it the Kuznyechik rows,
	// whose 21 samples are 21 calls of a 5 MiB buffer.
	DefaultCipherTime = 100 * time.Millisecond
	// DefaultKDFTime is the measuring time per PRF.
	DefaultKDFTime = 250 * time.Millisecond
	// SectorSize is the XTS data unit the cipher benchmark uses, the one of
	// VeraCrypt volumes; Options.Buffer must be a multiple of it.
	SectorSize = 512
)

// ErrInvalidOption is wrapped by the errors about options the caller got
// wrong: an unknown algorithm, a buffer that is no whole number of sectors.
var ErrInvalidOption = errors.New("invalid benchmark option")

// Options controls a benchmark run. The zero value means the defaults.
type Options struct {
	// Buffer is the number of bytes encrypted per call (Ciphers only); a
	// multiple of SectorSize. 0 means DefaultBuffer.
	Buffer int
	// Threads is the number of goroutines one call is spread over (through
	// sector.Parallel, which only splits runs of 64 KiB or more per thread).
	// For KDF it is the number of cores the header-time estimate assumes.
	// 0 means runtime.GOMAXPROCS(0), all cores.
	Threads int
	// Algorithms restricts the run to these chains (Ciphers: VeraCrypt
	// names such as "AES-Twofish") or PRFs (KDF: "SHA-512", "Whirlpool", ...,
	// "Argon2id"), matched case-insensitively. Empty means all.
	Algorithms []string
	// MinTime is the measuring time per algorithm and direction. 0 means
	// DefaultCipherTime or DefaultKDFTime.
	MinTime time.Duration
	// PIM is the VeraCrypt PIM the header-derivation figures of KDF use
	// (0 = VeraCrypt's default iteration counts and Argon2 cost).
	PIM int
	// Argon2Full makes KDF run one complete VeraCrypt Argon2id derivation
	// (416 MiB and six passes at the default PIM) instead of scaling the
	// time of a reduced-memory run.
	Argon2Full bool
	// Progress, if set, is called with (0, total) before the first
	// algorithm and then with each count up to total, the number of
	// algorithms' worth of work done (the cipher and PBKDF2 samples are
	// interleaved over all algorithms, so the count is a share of the
	// whole, not of finished rows).
	Progress func(done, total int)
	// Trying, if set, is called with the name of an algorithm (a chain,
	// a PRF) as its measurement starts, and, where the samples are
	// interleaved (ciphers, PBKDF2), each time one of its samples starts,
	// so that a front end can say what a slow one is doing (the CLI does
	// after 2 s).
	Trying func(name string)
}

func (o Options) threads() int {
	if o.Threads > 0 {
		return o.Threads
	}
	return runtime.GOMAXPROCS(0)
}

func (o Options) minTime(def time.Duration) time.Duration {
	if o.MinTime > 0 {
		return o.MinTime
	}
	return def
}

func (o Options) buffer() (int, error) {
	n := o.Buffer
	if n == 0 {
		n = DefaultBuffer
	}
	if n < SectorSize || n%SectorSize != 0 {
		return 0, fmt.Errorf("%w: buffer of %d bytes is not a whole number of %d-byte sectors", ErrInvalidOption, n, SectorSize)
	}
	return n, nil
}

func (o Options) check() error {
	if o.Threads < 0 {
		return fmt.Errorf("%w: %d threads", ErrInvalidOption, o.Threads)
	}
	if o.MinTime < 0 {
		return fmt.Errorf("%w: negative measuring time %v", ErrInvalidOption, o.MinTime)
	}
	if o.PIM < 0 {
		return fmt.Errorf("%w: negative PIM %d", ErrInvalidOption, o.PIM)
	}
	return nil
}

func (o Options) trying(name string) {
	if o.Trying != nil {
		o.Trying(name)
	}
}

func (o Options) progress(done, total int) {
	if o.Progress != nil {
		o.Progress(done, total)
	}
}
