package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"sort"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/sector"
)

// CipherResult is the speed of one cipher or cascade in bytes per second.
type CipherResult struct {
	// Name is VeraCrypt's name of the chain, e.g. "AES-Twofish-Serpent",
	// or Adiantum's row, "Adiantum-XChaCha12" or "Adiantum-XChaCha20".
	Name string `json:"name"`
	// Mode is the sector mode measured: "xts", or "adiantum" (LUKS2's
	// xchacha12,aes-adiantum-plain64 and xchacha20,...).
	Mode string `json:"mode"`
	// SectorSize is the data unit in bytes: 512 for XTS (VeraCrypt's),
	// 4096 for Adiantum (cryptsetup's default), or 512 when the buffer is
	// no whole number of 4096-byte sectors.
	SectorSize int `json:"sector_size"`
	// EncryptBPS, DecryptBPS are bytes per second, each the median over
	// the run's samples; MeanBPS is their arithmetic mean, as TrueCrypt's
	// "Mean" column.
	EncryptBPS int64 `json:"encrypt_bps"`
	DecryptBPS int64 `json:"decrypt_bps"`
	MeanBPS    int64 `json:"mean_bps"`
	// MedianBPS is MeanBPS again, under the name the spread goes with;
	// MinBPS and MaxBPS are the mean of the slowest (fastest) samples of
	// both directions: the figure's range in this run.
	MedianBPS int64 `json:"median_bps"`
	MinBPS    int64 `json:"min_bps"`
	MaxBPS    int64 `json:"max_bps"`
	// Samples is the number of timed samples per direction.
	Samples int `json:"samples"`
}

// Spread is the range relative to the median: (max-min)/median.
func (r CipherResult) Spread() float64 {
	if r.MedianBPS <= 0 {
		return 0
	}
	return float64(r.MaxBPS-r.MinBPS) / float64(r.MedianBPS)
}

// Ciphers measures XTS encryption and decryption, in place, of a buffer of
// o.Buffer bytes (512-byte data units, random keys and data) for every
// VeraCrypt chain (ciphers.Chains), and Adiantum with XChaCha12 and
// XChaCha20 over 4096-byte sectors, LUKS2's cipher for CPUs without AES
// instructions (or the ones o.Algorithms names), spread over o.Threads
// goroutines. The samples of all of them are interleaved (measureAll). The
// results are sorted by mean speed, fastest first, as TrueCrypt sorts its
// table.
func Ciphers(ctx context.Context, o Options) ([]CipherResult, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	size, err := o.buffer()
	if err != nil {
		return nil, err
	}
	chains, adiantums, err := selectAlgorithms(o.Algorithms)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	if _, err := rand.Read(buf); err != nil {
		return nil, err
	}
	threads := o.threads()
	jobs := make([]cipherJob, 0, len(chains)+len(adiantums))
	defer func() {
		for _, j := range jobs {
			j.close()
		}
	}()
	for _, c := range chains {
		j, err := chainJob(c, threads)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	for _, a := range adiantums {
		j, err := adiantumJob(a, size, threads)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	// Every chain in both directions, their samples interleaved (see
	// measureAll): encryption and decryption of one chain next to each
	// other, so both see about the same load.
	ops := make([]timedOp, 0, 2*len(jobs))
	for _, j := range jobs {
		m := j.mode
		ops = append(ops,
			timedOp{name: j.result.Name, run: func() error { m.Encrypt(buf, buf, 0); return nil }},
			timedOp{name: j.result.Name, run: func() error { m.Decrypt(buf, buf, 0); return nil }})
	}
	o.progress(0, len(jobs))
	spreads, err := measureAll(ctx, o.minTime(DefaultCipherTime), ops, sampleHooks{trying: o.Trying, progress: inUnitsOf(len(jobs), o.progress)})
	if err != nil {
		return nil, err
	}
	out := make([]CipherResult, 0, len(jobs))
	for i, j := range jobs {
		out = append(out, withSpeeds(j.result, len(buf), spreads[2*i], spreads[2*i+1]))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].MeanBPS > out[j].MeanBPS })
	return out, nil
}

// selectAlgorithms resolves the requested names to XTS chains and
// Adiantum rows, or returns every VeraCrypt chain and both Adiantum rows
// for none.
func selectAlgorithms(names []string) ([]ciphers.Chain, []adiantumRow, error) {
	if len(names) == 0 {
		return ciphers.Chains(), adiantumRows, nil
	}
	var out []ciphers.Chain
	var ads []adiantumRow
	seen := map[string]bool{}
	for _, n := range names {
		if rows := lookupAdiantum(n); rows != nil {
			for _, r := range rows {
				if !seen[r.name] {
					seen[r.name] = true
					ads = append(ads, r)
				}
			}
			continue
		}
		c, err := ciphers.LookupChain(n)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %v (known: %s)", ErrInvalidOption, err, chainNames())
		}
		if err := checkXTSChain(c); err != nil {
			return nil, nil, err
		}
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c)
		}
	}
	return out, ads, nil
}

// checkXTSChain rejects TrueCrypt's legacy 64-bit-block chains, which XTS
// cannot run (TrueCrypt only ever used them in CBC and LRW).
func checkXTSChain(c ciphers.Chain) error {
	for _, name := range c.Ciphers {
		s, err := ciphers.Lookup(name)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidOption, err)
		}
		if s.BlockSize != 16 {
			return fmt.Errorf("%w: %s is a legacy %d-bit-block cipher; XTS needs 128-bit blocks", ErrInvalidOption, c.Name, 8*s.BlockSize)
		}
	}
	return nil
}

func chainNames() string {
	s := ""
	for i, c := range ciphers.Chains() {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	for _, r := range adiantumRows {
		s += ", " + r.name
	}
	return s
}

// cipherJob is one row of the cipher benchmark, set up to be timed: its
// sector mode (spread over the threads) and the result's name, mode and
// sector size; close wipes its keys.
type cipherJob struct {
	mode   sector.Mode
	result CipherResult
	close  func()
}

// chainJob sets up one XTS chain with a random key.
func chainJob(c ciphers.Chain, threads int) (cipherJob, error) {
	keySize, err := sector.ChainKeySize(c)
	if err != nil {
		return cipherJob{}, err
	}
	key := make([]byte, keySize)
	wipe := func() { clear(key) }
	if _, err := rand.Read(key); err != nil {
		return cipherJob{}, err
	}
	m, err := sector.ChainXTS(c, key, SectorSize)
	if err != nil {
		wipe()
		return cipherJob{}, err
	}
	return cipherJob{mode: sector.Parallel(m, threads), result: CipherResult{Name: c.Name, Mode: "xts", SectorSize: SectorSize}, close: wipe}, nil
}

// withSpeeds fills r's speeds from the times per call of a buffer of n
// bytes in each direction: medians over the samples, with their range.
func withSpeeds(r CipherResult, n int, enc, dec Spread) CipherResult {
	e, eLo, eHi := rateRange(float64(n), enc)
	d, dLo, dHi := rateRange(float64(n), dec)
	r.EncryptBPS, r.DecryptBPS, r.MeanBPS = int64(e), int64(d), int64((e+d)/2)
	r.MedianBPS, r.MinBPS, r.MaxBPS = r.MeanBPS, int64((eLo+dLo)/2), int64((eHi+dHi)/2)
	r.Samples = min(enc.N, dec.N)
	return r
}

// inUnitsOf turns progress in samples into progress in n rows (the
// Options.Progress contract: a count of algorithms), reporting every
// count once, in order, as the samples pass it.
func inUnitsOf(n int, progress func(done, total int)) func(done, total int) {
	last := 0
	return func(done, total int) {
		for k := done * n / max(total, 1); last < k; {
			last++
			progress(last, n)
		}
	}
}
