package chart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cryptvol/cryptvol/bench"
)

// Kind is what a benchmark measured.
type Kind string

// The kinds of `cryptvol benchmark` that have charts.
const (
	KindCiphers Kind = "ciphers" // XTS speed per cipher and cascade
	KindKDF     Kind = "kdf"     // PBKDF2/Argon2 rate and header time per PRF
	KindMatrix  Kind = "matrix"  // volume creation speed per hash × encryption
	KindIO      Kind = "io"      // raw against encrypted disk I/O
)

// ErrInput is wrapped by every error about a file Parse cannot use.
var ErrInput = errors.New("not a cryptvol benchmark result")

// Machine is where and how a run was made, as far as its JSON tells.
type Machine struct {
	CPU             string            `json:"cpu,omitempty"`
	GOOS            string            `json:"goos,omitempty"`
	GOARCH          string            `json:"goarch,omitempty"`
	Cores           int               `json:"cores,omitempty"`
	AESHW           bool              `json:"aes_hw"`
	Features        []string          `json:"features,omitempty"`
	Implementations map[string]string `json:"implementations,omitempty"`
	Buffer          int               `json:"buffer,omitempty"`
	Threads         int               `json:"threads,omitempty"`
}

// MatrixCell is one volume of `benchmark matrix`.
// The Min/Max fields are the ranges over the volumes created per pair
// (absent, so 0, in the JSON of versions before issue 28).
type MatrixCell struct {
	Hash          string  `json:"hash"`
	Encryption    string  `json:"encryption"`
	CreateBPS     float64 `json:"create_bps"`
	KDFSeconds    float64 `json:"kdf_seconds"`
	MinCreateBPS  float64 `json:"min_create_bps"`
	MaxCreateBPS  float64 `json:"max_create_bps"`
	MinKDFSeconds float64 `json:"min_kdf_seconds"`
	MaxKDFSeconds float64 `json:"max_kdf_seconds"`
}

// IOSpeed is one pass of `benchmark io`, in bytes per second.
// The Min/Max fields are the range over the runs (absent, so 0, in the
// JSON of versions before issue 28, which reported the fastest run).
type IOSpeed struct {
	WriteBPS    float64 `json:"write_bps"`
	ReadBPS     float64 `json:"read_bps"`
	WriteMinBPS float64 `json:"write_min_bps"`
	WriteMaxBPS float64 `json:"write_max_bps"`
	ReadMinBPS  float64 `json:"read_min_bps"`
	ReadMaxBPS  float64 `json:"read_max_bps"`
}

// IOResult is what `benchmark io` measured.
type IOResult struct {
	Target     string  `json:"target"`
	Size       int64   `json:"size"`
	BlockSize  int     `json:"block_size"`
	Via        string  `json:"via"`
	Encryption string  `json:"encryption"`
	Filesystem string  `json:"filesystem"`
	Raw        IOSpeed `json:"raw"`
	Encrypted  IOSpeed `json:"encrypted"`
}

// Run is one benchmark run: its results, the machine, and the JSON they
// came from.
type Run struct {
	Kind Kind
	// Label names the run in comparisons (a file's base name by default).
	Label   string
	Machine Machine
	// Date and Version are known when the run came from an HTML report
	// or was made in this process.
	Date, Version string

	Ciphers []bench.CipherResult
	KDF     []bench.KDFResult
	// PIM is the PIM of the KDF figures (kdf) or of the volumes (matrix).
	PIM    int
	Matrix []MatrixCell
	// MatrixSize is the size of the volumes of a matrix run.
	MatrixSize int64
	IO         *IOResult

	// JSON is the result exactly as the benchmark printed it.
	JSON json.RawMessage
}

// envelope is the JSON an HTML report embeds: one run, or the runs of a
// comparison.
type envelope struct {
	Format  string          `json:"cryptvol_benchmark"` // "report" or "compare"
	Kind    Kind            `json:"kind"`
	Label   string          `json:"label,omitempty"`
	Date    string          `json:"date,omitempty"`
	Version string          `json:"version,omitempty"`
	Machine *Machine        `json:"machine,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Runs    []envelope      `json:"runs,omitempty"`
}

// scriptID is the id of the element holding the embedded JSON.
const scriptID = "cryptvol-benchmark"

// FromJSON reads the JSON output of one benchmark run and tells its kind
// from its fields.
func FromJSON(data []byte) (*Run, error) {
	var probe struct {
		Ciphers   json.RawMessage `json:"ciphers"`
		KDF       json.RawMessage `json:"kdf"`
		Volumes   json.RawMessage `json:"volumes"`
		Encrypted json.RawMessage `json:"encrypted"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	var k Kind
	switch {
	case probe.Volumes != nil:
		k = KindMatrix
	case probe.Encrypted != nil:
		k = KindIO
	case probe.KDF != nil:
		k = KindKDF
	case probe.Ciphers != nil:
		// benchmark enc prints "ciphers" too, with openssl_* fields and
		// no XTS mode; it has no chart.
		var rows []map[string]any
		json.Unmarshal(probe.Ciphers, &rows)
		if len(rows) > 0 && rows[0]["mode"] == nil {
			return nil, fmt.Errorf("%w: benchmark enc and archive results have no chart (ciphers, kdf, matrix and io do)", ErrInput)
		}
		k = KindCiphers
	default:
		return nil, fmt.Errorf("%w: no ciphers, kdf, volumes or raw/encrypted results in it", ErrInput)
	}
	return decode(k, data)
}

// decode fills a Run of kind k from the benchmark's JSON.
func decode(k Kind, data []byte) (*Run, error) {
	r := &Run{Kind: k, JSON: append(json.RawMessage(nil), data...)}
	var err error
	switch k {
	case KindCiphers, KindKDF:
		var rep bench.Report
		if err = json.Unmarshal(data, &rep); err == nil {
			r.Machine = Machine{CPU: rep.CPU, GOOS: rep.GOOS, GOARCH: rep.GOARCH, Cores: rep.Cores, AESHW: rep.AESHW,
				Features: rep.Features, Implementations: rep.Implementations, Buffer: rep.Buffer, Threads: rep.Threads}
			r.Ciphers, r.KDF = rep.Ciphers, rep.KDF
			if len(rep.KDF) > 0 {
				r.PIM = rep.KDF[0].PIM
			}
		}
		if err == nil && (k == KindCiphers && len(r.Ciphers) == 0 || k == KindKDF && len(r.KDF) == 0) {
			err = errors.New("no results")
		}
	case KindMatrix:
		var m struct {
			Size    int64        `json:"size"`
			PIM     int          `json:"pim"`
			Volumes []MatrixCell `json:"volumes"`
		}
		if err = json.Unmarshal(data, &m); err == nil {
			r.Matrix, r.PIM, r.MatrixSize = m.Volumes, m.PIM, m.Size
			if len(m.Volumes) == 0 {
				err = errors.New("no volumes")
			}
		}
	case KindIO:
		r.IO = new(IOResult)
		err = json.Unmarshal(data, r.IO)
	default:
		err = fmt.Errorf("unknown kind %q", k)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s results: %v", ErrInput, k, err)
	}
	return r, nil
}

// Parse reads a benchmark's JSON output or an HTML report (one run, or
// every run of a comparison report). name labels the runs that carry no
// label of their own.
func Parse(name string, data []byte) ([]*Run, error) {
	label := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		r, err := FromJSON(trimmed)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.Label = label
		return []*Run{r}, nil
	}
	env, err := embedded(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	runs, err := env.runs(label)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return runs, nil
}

// embedded finds the JSON an HTML report carries.
func embedded(page []byte) (*envelope, error) {
	open := []byte(`<script type="application/json" id="` + scriptID + `">`)
	i := bytes.Index(page, open)
	if i < 0 {
		return nil, fmt.Errorf("%w: neither JSON nor an HTML report of cryptvol (no embedded results)", ErrInput)
	}
	rest := page[i+len(open):]
	j := bytes.Index(rest, []byte("</script>"))
	if j < 0 {
		return nil, fmt.Errorf("%w: the embedded results are cut short", ErrInput)
	}
	var env envelope
	// The JSON was written with encoding/json's HTML escaping (<, > and &
	// as \u003c...), so the element holds no markup and ends at the
	// first </script>.
	if err := json.Unmarshal(rest[:j], &env); err != nil {
		return nil, fmt.Errorf("%w: embedded results: %v", ErrInput, err)
	}
	return &env, nil
}

func (e *envelope) runs(label string) ([]*Run, error) {
	switch e.Format {
	case "compare":
		var out []*Run
		for i := range e.Runs {
			rs, err := e.Runs[i].runs(fmt.Sprintf("%s#%d", label, i+1))
			if err != nil {
				return nil, err
			}
			out = append(out, rs...)
		}
		return out, nil
	case "report":
		r, err := decode(e.Kind, e.Result)
		if err != nil {
			return nil, err
		}
		r.Label, r.Date, r.Version = e.Label, e.Date, e.Version
		if r.Label == "" {
			r.Label = label
		}
		if e.Machine != nil && (r.Kind == KindMatrix || r.Kind == KindIO) {
			r.Machine = *e.Machine
		}
		return []*Run{r}, nil
	}
	return nil, fmt.Errorf("%w: embedded results of unknown format %q", ErrInput, e.Format)
}

// envelope is the run as an HTML report embeds it.
func (r *Run) envelope() envelope {
	m := r.Machine
	return envelope{Format: "report", Kind: r.Kind, Label: r.Label, Date: r.Date, Version: r.Version, Machine: &m, Result: r.JSON}
}
