package bench

import (
	"strings"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/adiantum"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
	"github.com/cryptvol/cryptvol/internal/platform"
)

// Report is the whole output of `cryptvol benchmark --format json`: the
// machine, the run's settings and the results. Its JSON field names are
// part of the command-line contract (docs/ARCHITECTURE.md); fields are
// only added.
type Report struct {
	// CPU is the CPU model where the OS tells it, else "unknown".
	CPU string `json:"cpu"`
	// AESHW reports whether the AES code in use runs on the CPU's AES
	// instructions (AES-NI, ARMv8 Crypto Extensions), not just whether the
	// CPU has them.
	AESHW  bool   `json:"aes_hw"`
	GOOS   string `json:"goos"`
	GOARCH string `json:"goarch"`
	Cores  int    `json:"cores"`
	// Features lists the instruction-set extensions the fast paths use
	// that this CPU has (AES-NI, PCLMULQDQ, AVX2, VAES, PMULL, NEON, ...).
	Features []string `json:"features"`
	// Implementations maps each cipher the benchmark measures (the five
	// of VeraCrypt's chains, and Adiantum's parts: XChaCha and NH; its
	// AES is the AES entry) to the code path it uses here.
	Implementations map[string]string `json:"implementations"`
	// Buffer is the cipher benchmark's buffer in bytes (0 in a KDF run).
	Buffer int `json:"buffer"`
	// Threads is the number of goroutines per call (cipher run) or of
	// cores the header-time estimate assumes (KDF run).
	Threads int            `json:"threads"`
	Ciphers []CipherResult `json:"ciphers,omitempty"`
	KDF     []KDFResult    `json:"kdf,omitempty"`
}

// NewReport describes this machine and the settings o resolves to; the
// caller fills in Ciphers or KDF (and leaves Buffer at 0 for a KDF run).
func NewReport(o Options) Report {
	p := platform.Detect()
	r := Report{
		CPU:             p.CPU,
		GOOS:            p.GOOS,
		GOARCH:          p.GOARCH,
		Cores:           p.Cores,
		Features:        append([]string{}, p.Flags...),
		Implementations: map[string]string{},
		Threads:         o.threads(),
	}
	if n, err := o.buffer(); err == nil {
		r.Buffer = n
	}
	for _, s := range ciphers.All() {
		if !s.Legacy {
			r.Implementations[s.Name] = s.Implementation()
		}
	}
	r.Implementations["XChaCha"] = chacha20.XImplementation()
	r.Implementations["NH"] = adiantum.NHImplementation()
	r.AESHW = p.AESHW && !strings.HasPrefix(r.Implementations["AES"], "generic")
	return r
}
