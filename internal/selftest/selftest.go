// Package selftest checks every algorithm cryptvol implements against
// published known-answer vectors embedded in the binary, the way TrueCrypt
// and VeraCrypt test themselves at start-up. `cryptvol selftest` prints its
// results; a FAIL means this build or this CPU computes something else than
// the standard says, and no volume should be trusted to it.
//
// The vectors (testdata/, with their sources in testdata/README.md) are a
// small, fast subset of the ones each package tests itself with: a few per
// algorithm, no iteration count above 4096, well under a second in all. They
// run through the same registries and constructors the volume code uses
// (ciphers.Lookup, sector.ChainXTS, kdf.PBKDF2, ...), so the code path
// checked is the one this CPU selected. Block-cipher vectors also run as a
// 64-block ECB batch, which reaches the wide SIMD kernels that a single
// block never enters.
package selftest

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed testdata/*.txt
var vectors embed.FS

// Result is the outcome of the vectors of one algorithm.
type Result struct {
	// Name is the algorithm, e.g. "AES-256", "XTS AES-Twofish-Serpent",
	// "PBKDF2-HMAC-Whirlpool".
	Name string
	// Source names the publication the vectors come from.
	Source string
	// Vectors is the number of vectors checked.
	Vectors int
	// Err is nil when every vector gave the published answer, else the
	// first mismatch (and how many vectors failed).
	Err error
}

// Passed reports whether every vector of the algorithm passed.
func (r Result) Passed() bool { return r.Err == nil }

// checker verifies one vector record; setup is the file's setup record
// (shared inputs), if any.
type checker func(ctx context.Context, v, setup record) error

// suites lists the vector files in the order their results are reported.
var suites = []struct {
	file  string
	check checker
}{
	{"blockciphers.txt", checkBlockCipher},
	{"xts.txt", checkXTS},
	{"essiv.txt", checkESSIV},
	{"lrw.txt", checkLRW},
	{"cascades.txt", checkCascade},
	{"hashes.txt", checkHash},
	{"pbkdf2.txt", checkPBKDF2},
	{"argon2.txt", checkArgon2},
	{"streams.txt", checkStream},
	{"adiantum.txt", checkAdiantum},
}

// Run checks every embedded vector and returns one Result per algorithm,
// in a fixed order. It stops early, marking what is left as failed, if ctx
// ends.
func Run(ctx context.Context) []Result {
	sub, err := fs.Sub(vectors, "testdata")
	if err != nil {
		return []Result{{Name: "embedded vectors", Err: err}}
	}
	return run(ctx, sub)
}

// run checks the vector files in fsys (tests hand it altered copies).
func run(ctx context.Context, fsys fs.FS) []Result {
	var out []Result
	index := map[string]int{}
	for _, s := range suites {
		data, err := fs.ReadFile(fsys, s.file)
		if err != nil {
			out = append(out, Result{Name: "vector file " + s.file, Err: err})
			continue
		}
		recs, err := parseRecords(string(data))
		if err != nil {
			out = append(out, Result{Name: "vector file " + s.file, Err: err})
			continue
		}
		var setup record
		for _, v := range recs {
			if v.has("setup") {
				setup = v
				continue
			}
			name := v.get("algo")
			if name == "" {
				out = append(out, Result{Name: "vector file " + s.file, Err: fmt.Errorf("line %d: record without algo", v.line)})
				continue
			}
			i, ok := index[name]
			if !ok {
				i = len(out)
				index[name] = i
				out = append(out, Result{Name: name, Source: v.get("source")})
			}
			r := &out[i]
			if src := v.get("source"); src != "" && !strings.Contains(r.Source, src) {
				r.Source += "; " + src
			}
			r.Vectors++
			err := ctx.Err()
			if err == nil {
				err = safeCheck(ctx, s.check, v, setup)
			}
			if err != nil {
				if r.Err == nil {
					r.Err = fmt.Errorf("%s: %w", v.label(), err)
				} else {
					r.Err = addFailure(r.Err)
				}
			}
		}
	}
	return out
}

// moreFailures counts the failures after the first one of an algorithm.
type moreFailures struct {
	first error
	more  int
}

func (m *moreFailures) Error() string {
	return fmt.Sprintf("%v (and %d more failing vector(s))", m.first, m.more)
}

func (m *moreFailures) Unwrap() error { return m.first }

func addFailure(err error) error {
	var m *moreFailures
	if errors.As(err, &m) {
		m.more++
		return m
	}
	return &moreFailures{first: err, more: 1}
}

// safeCheck runs one check, turning a panic (a constructor or mode fed a
// malformed vector) into a failure instead of a crash.
func safeCheck(ctx context.Context, c checker, v, setup record) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return c(ctx, v, setup)
}
