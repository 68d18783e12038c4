package luks

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/kdf"
	"github.com/cryptvol/cryptvol/kdf/argon2"
	"github.com/cryptvol/cryptvol/volume"
)

// Defaults of cryptsetup 2.6 for new keyslots.
const (
	DefaultIterTime      = 2 * time.Second
	DefaultArgon2Memory  = 1 << 20 // KiB (1 GiB)
	DefaultArgon2Threads = 4
	DefaultHash          = "sha256"
	minPBKDF2Iterations  = 1000 // NIST SP 800-132, cryptsetup's floor
	minArgon2Time        = 4
	minArgon2Memory      = 32 // KiB
	maxArgon2Memory      = 4 << 20
	maxArgon2Threads     = 4
	// digestTime is how long the volume key digest's PBKDF2 takes
	// (cryptsetup's LUKS_MKD_ITERATIONS_MS).
	digestTime = 125 * time.Millisecond
)

// KDFOptions choose how a keyslot's passphrase is stretched; the zero
// value is cryptsetup's default for the format (argon2id for LUKS2, PBKDF2
// with SHA-256 for LUKS1) benchmarked to take 2 s.
type KDFOptions struct {
	// PBKDF is "pbkdf2", "argon2i" or "argon2id" (cryptsetup's --pbkdf).
	PBKDF string
	// Hash is PBKDF2's hash (--hash; LUKS1 uses the header's hash).
	Hash string
	// IterTime is the unlock time to aim for (--iter-time).
	IterTime time.Duration
	// Iterations skips the benchmark: PBKDF2 iterations or Argon2 time
	// cost (--pbkdf-force-iterations).
	Iterations int
	// MemoryKiB caps Argon2's memory (--pbkdf-memory); with Iterations
	// set it is used as is.
	MemoryKiB int
	// Parallel is Argon2's thread count (--pbkdf-parallel), at most 4.
	Parallel int
}

// resolved returns the options with defaults filled in for a LUKS version.
// Every refusal is an option error (volume.ErrInvalidOption): the KDF
// choice, its hash, memory, threads and forced costs all come from the
// command line, so create, keyslot add and keyslot change give them the
// same exit code.
func (o KDFOptions) resolved(version int) (KDFOptions, error) {
	o.PBKDF = strings.ToLower(o.PBKDF)
	if o.PBKDF == "" {
		o.PBKDF = "argon2id"
		if version == 1 {
			o.PBKDF = "pbkdf2"
		}
	}
	switch o.PBKDF {
	case "pbkdf2":
	case "argon2i", "argon2id":
		if version == 1 {
			return o, volume.InvalidOptionf("LUKS1 keyslots use PBKDF2 only, not %s", o.PBKDF)
		}
	default:
		return o, volume.InvalidOptionf("unknown --pbkdf %q (want pbkdf2, argon2i or argon2id)", o.PBKDF)
	}
	if o.Hash == "" {
		o.Hash = DefaultHash
	}
	if _, err := lookupHash(o.Hash); err != nil {
		return o, volume.InvalidOption(err)
	}
	if o.IterTime == 0 {
		o.IterTime = DefaultIterTime
	}
	if o.IterTime < 0 || o.Iterations < 0 || o.MemoryKiB < 0 || o.Parallel < 0 {
		return o, volume.InvalidOption(errors.New("negative KDF parameter"))
	}
	if o.Parallel == 0 {
		o.Parallel = min(DefaultArgon2Threads, runtime.NumCPU())
	}
	if o.Parallel > maxArgon2Threads {
		return o, volume.InvalidOptionf("--pbkdf-parallel %d: cryptsetup allows at most %d", o.Parallel, maxArgon2Threads)
	}
	if o.MemoryKiB == 0 {
		o.MemoryKiB = DefaultArgon2Memory
	}
	if o.PBKDF != "pbkdf2" {
		if o.MemoryKiB < minArgon2Memory || o.MemoryKiB > maxArgon2Memory {
			return o, volume.InvalidOptionf("--pbkdf-memory %d KiB outside cryptsetup's %d..%d", o.MemoryKiB, minArgon2Memory, maxArgon2Memory)
		}
		if o.Iterations != 0 && o.Iterations < minArgon2Time {
			return o, volume.InvalidOptionf("argon2 time cost %d below cryptsetup's minimum %d", o.Iterations, minArgon2Time)
		}
	} else if o.Iterations != 0 && o.Iterations < minPBKDF2Iterations {
		return o, volume.InvalidOptionf("PBKDF2 iterations %d below cryptsetup's minimum %d", o.Iterations, minPBKDF2Iterations)
	}
	return o, nil
}

// params benchmarks (unless forced) and returns the derivation parameters
// for a key of keyLen bytes.
func (o KDFOptions) params(ctx context.Context, keyLen int) (kdf.Params, error) {
	if o.PBKDF == "pbkdf2" {
		n := o.Iterations
		if n == 0 {
			var err error
			if n, err = calibratePBKDF2(ctx, o.Hash, keyLen, o.IterTime); err != nil {
				return kdf.Params{}, err
			}
		}
		return kdf.Params{Kind: kdf.KindPBKDF2, PRF: o.Hash, Iterations: uint32(n)}, nil
	}
	kind := kdf.KindArgon2id
	if o.PBKDF == "argon2i" {
		kind = kdf.KindArgon2i
	}
	p := kdf.Params{Kind: kind, Iterations: uint32(o.Iterations), MemoryKiB: uint32(o.MemoryKiB), Parallelism: uint32(o.Parallel)}
	if o.Iterations != 0 {
		return p, nil
	}
	return calibrateArgon2(ctx, p, keyLen, o.IterTime)
}

var benchSalt = []byte("cryptvol benchmark salt 32 bytes")

// calibratePBKDF2 measures PBKDF2-hash on one output block and returns the
// iterations that make a keyLen-byte derivation take target on one core,
// as cryptsetup counts it (every block of the output is a full chain).
func calibratePBKDF2(ctx context.Context, hash string, keyLen int, target time.Duration) (int, error) {
	hs, err := lookupHash(hash)
	if err != nil {
		return 0, err
	}
	blocks := (keyLen + hs.Size - 1) / hs.Size
	iters := 1 << 12
	for {
		start := time.Now()
		if _, err := kdf.PBKDF2Context(ctx, hs, []byte("benchmark"), benchSalt, iters, hs.Size); err != nil {
			return 0, err
		}
		el := time.Since(start)
		if el >= 200*time.Millisecond || iters >= 1<<30 {
			perSec := float64(iters) / el.Seconds()
			n := int(perSec * target.Seconds() / float64(blocks))
			return max(n, minPBKDF2Iterations), nil
		}
		if el < 10*time.Millisecond {
			iters *= 16
		} else {
			iters = int(float64(iters) * 250e6 / float64(el.Nanoseconds()))
		}
	}
}

// calibrateArgon2 finds a time and memory cost for p's kind and threads
// that take about target, preferring memory (up to p.MemoryKiB) to passes,
// the way cryptsetup's benchmark does. When the machine cannot give the
// memory, the cap is halved.
func calibrateArgon2(ctx context.Context, p kdf.Params, keyLen int, target time.Duration) (kdf.Params, error) {
	maxMem := uint64(p.MemoryKiB)
	minMem := uint64(max(minArgon2Memory, 8*p.Parallelism))
	if maxMem < minMem {
		maxMem = minMem
	}
	measure := func(t uint32, m uint64) (time.Duration, error) {
		for {
			q := p
			q.Iterations, q.MemoryKiB = t, uint32(m)
			start := time.Now()
			_, err := kdf.Derive(ctx, q, []byte("benchmark"), benchSalt, keyLen)
			if err == nil {
				return time.Since(start), nil
			}
			if !errors.Is(err, argon2.ErrInsufficientMemory) || m/2 < minMem {
				return 0, err
			}
			// The machine cannot give this much: lower the cap.
			m /= 2
			maxMem = m
		}
	}
	t, m := uint32(minArgon2Time), minMem
	var el time.Duration
	var err error
	// 1. Grow memory (then passes) until a run is long enough to measure.
	for {
		if el, err = measure(t, min(m, maxMem)); err != nil {
			return p, err
		}
		m = min(m, maxMem)
		if el >= 250*time.Millisecond {
			break
		}
		if m == maxMem {
			if el < 10*time.Millisecond {
				t *= 16
			} else {
				t = uint32(float64(t) * 250e6 / float64(el.Nanoseconds()))
			}
			continue
		}
		if el < 10*time.Millisecond {
			m *= 16
		} else {
			m = uint64(float64(m) * 250e6 / float64(el.Nanoseconds()))
		}
	}
	// 2. Scale to the target and re-measure until within -5%..+10%.
	for i := 0; i < 8; i++ {
		ratio := float64(target) / float64(el)
		nt, nm := t, m
		if ratio < 1 {
			if f := float64(t) * ratio; f >= minArgon2Time {
				nt = uint32(f)
			} else {
				nt = minArgon2Time
				nm = max(minMem, uint64(float64(t)*float64(m)*ratio/minArgon2Time))
			}
		} else {
			if f := float64(m) * ratio; f <= float64(maxMem) {
				nm = uint64(f)
			} else {
				nm = maxMem
				nt = max(minArgon2Time, uint32(float64(t)*float64(m)*ratio/float64(maxMem)))
			}
		}
		if nt == t && nm == m {
			break
		}
		t, m = nt, nm
		if el, err = measure(t, m); err != nil {
			return p, err
		}
		m = min(m, maxMem)
		if el >= target*95/100 && el <= target*110/100 {
			break
		}
	}
	p.Iterations, p.MemoryKiB = t, uint32(m)
	return p, nil
}

// digestIterations is the PBKDF2 iteration count of the volume key
// digest: 125 ms worth, at least 1000 (just 1000 when the keyslot's cost
// was forced, as cryptsetup does).
func digestIterations(ctx context.Context, hash string, keyLen int, forced bool) (int, error) {
	if forced {
		return minPBKDF2Iterations, nil
	}
	return calibratePBKDF2(ctx, hash, keyLen, digestTime)
}
