package kdf

import (
	"bytes"
	"context"
	stdpbkdf2 "crypto/pbkdf2"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/cryptvol/cryptvol/hashes"
	"github.com/cryptvol/cryptvol/kdf/internal/lanes"
)

// withKernels forces the lane kernels for the rest of the test (nil: the
// one-chain-at-a-time path).
func withKernels(t *testing.T, ks []*lanes.Kernel) {
	saved := kernelsFor
	kernelsFor = func(lanes.Hash) []*lanes.Kernel { return ks }
	t.Cleanup(func() { kernelsFor = saved })
}

// kernelSets returns what TestDeriveManyEveryKernelSet runs for h: the
// dispatched set, each available kernel alone, and none.
func kernelSets(h lanes.Hash) map[string][]*lanes.Kernel {
	sets := map[string][]*lanes.Kernel{"dispatched": lanes.Kernels(h), "none": nil}
	for _, k := range lanes.Available(h) {
		sets[k.Name] = []*lanes.Kernel{k}
	}
	return sets
}

// TestDeriveManyEveryKernelSet: PBKDF2-HMAC-SHA-512/-SHA-256/-RIPEMD-160 through
// every kernel (alone and as dispatched) and through the scalar path,
// for 1 to 4 salts, with 1, 2 and 4 goroutines, equals crypto/pbkdf2 on
// random passwords, salts, iteration counts and key lengths (so lane
// groups come out full and partly filled).
func TestDeriveManyEveryKernelSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	rnd := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for _, lh := range []lanes.Hash{lanes.SHA256, lanes.SHA512, lanes.RIPEMD160, lanes.BLAKE2s256} {
		spec := hashes.MustLookup(lh.String())
		for name, ks := range kernelSets(lh) {
			t.Run(lh.String()+"/"+name, func(t *testing.T) {
				withKernels(t, ks)
				for trial := 0; trial < 8; trial++ {
					par := []int{1, 2, 4}[trial%3]
					withParallel(t, par)
					pw := rnd(rng.IntN(2*spec.BlockSize + 1))
					salts := make([][]byte, 1+rng.IntN(4))
					iter := 1 + rng.IntN(30)
					keyLen := 1 + rng.IntN(400)
					if trial >= 6 {
						// Enough iterations for goroutines and several
						// chunks between context checks; kept small
						// for the emulated architectures.
						iter = parallelThreshold + rng.IntN(1500)
						salts = salts[:min(len(salts), 2)]
						keyLen = 1 + rng.IntN(192)
					}
					for i := range salts {
						salts[i] = rnd(rng.IntN(80))
					}
					p := Params{Kind: KindPBKDF2, PRF: spec.Name, Iterations: uint32(iter)}
					got, err := DeriveMany(context.Background(), p, pw, salts, keyLen)
					if err != nil {
						t.Fatal(err)
					}
					for i, salt := range salts {
						want, err := stdpbkdf2.Key(spec.New, string(pw), salt, iter, keyLen)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(got[i], want) {
							t.Fatalf("salt %d of %d, %d iterations, %d-byte key, %d goroutines:\n got %x\nwant %x",
								i, len(salts), iter, keyLen, par, got[i], want)
						}
					}
				}
			})
		}
	}
}

// TestDeriveManyMatchesDerive: for every KDF a volume may use, DeriveMany
// over the three header salts equals Derive on each.
func TestDeriveManyMatchesDerive(t *testing.T) {
	salts := [][]byte{bytes.Repeat([]byte{1}, 64), bytes.Repeat([]byte{2}, 64), bytes.Repeat([]byte{3}, 64)}
	pw := []byte("header copies")
	var params []Params
	for _, h := range hashes.All() {
		params = append(params, Params{Kind: KindPBKDF2, PRF: h.Name, Iterations: 300})
	}
	params = append(params, Params{Kind: KindArgon2id, Iterations: 1, MemoryKiB: 64, Parallelism: 1})
	for _, p := range params {
		got, err := DeriveMany(context.Background(), p, pw, salts, 192)
		if err != nil {
			t.Fatal(err)
		}
		for i, salt := range salts {
			want, err := Derive(context.Background(), p, pw, salt, 192)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[i], want) {
				t.Errorf("%v, salt %d: DeriveMany and Derive differ", p, i)
			}
		}
	}
}

func TestDeriveManyBadArguments(t *testing.T) {
	ctx := context.Background()
	p := Params{Kind: KindPBKDF2, PRF: "SHA-512", Iterations: 10}
	if _, err := DeriveMany(ctx, p, nil, [][]byte{nil}, 0); err == nil {
		t.Error("0-byte key accepted")
	}
	if _, err := DeriveMany(ctx, Params{Kind: KindPBKDF2, PRF: "SHA-512"}, nil, [][]byte{nil}, 32); err == nil {
		t.Error("0 iterations accepted")
	}
	if _, err := DeriveMany(ctx, Params{Kind: KindPBKDF2, PRF: "nope", Iterations: 1}, nil, [][]byte{nil}, 32); !errors.Is(err, hashes.ErrUnknown) {
		t.Errorf("unknown PRF: %v", err)
	}
	if keys, err := DeriveMany(ctx, p, nil, nil, 32); err != nil || keys == nil || len(keys) != 0 {
		t.Errorf("no salts: %v, %v", keys, err)
	}
}

// TestDeriveManyCancel: a derivation running in lanes (and the scalar
// one) stops soon after its context ends, on one goroutine and on many.
func TestDeriveManyCancel(t *testing.T) {
	for _, prf := range []string{"SHA-512", "SHA-256"} {
		for _, par := range []int{1, 4} {
			withParallel(t, par)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			start := time.Now()
			p := Params{Kind: KindPBKDF2, PRF: prf, Iterations: 1 << 30}
			_, err := DeriveMany(ctx, p, []byte("pw"), [][]byte{{1}, {2}, {3}}, 192)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: err = %v, want context.Canceled", prf, err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s: took %v to notice the cancel", prf, d)
			}
		}
	}
}

// TestPlanGroups checks the lane plans for the kernels of this project's
// CPUs (their measured relative costs) and for the generic kernel.
func TestPlanGroups(t *testing.T) {
	ymm4 := &lanes.Kernel{Name: "ymm4", Lanes: 4, Cost: 400}
	zmm8 := &lanes.Kernel{Name: "zmm8", Lanes: 8, Cost: 635}
	ni1 := &lanes.Kernel{Name: "ni1", Lanes: 1, Cost: 50}
	ni2 := &lanes.Kernel{Name: "ni2", Lanes: 2, Cost: 60}
	gen := &lanes.Kernel{Name: "gen", Lanes: 1, Cost: 1}
	show := func(plan [][]*lanes.Kernel) string {
		var ws []string
		for _, w := range plan {
			var names []string
			for _, k := range w {
				names = append(names, k.Name)
			}
			ws = append(ws, strings.Join(names, "+"))
		}
		return strings.Join(ws, " | ")
	}
	for _, c := range []struct {
		ks      []*lanes.Kernel
		n, w    int
		want    string
		because string
	}{
		{[]*lanes.Kernel{ymm4, zmm8}, 3, 1, "ymm4", "one header key: 3 of 4 lanes"},
		{[]*lanes.Kernel{ymm4, zmm8}, 3, 2, "ymm4", "a second core cannot help one group"},
		{[]*lanes.Kernel{ymm4, zmm8}, 6, 1, "zmm8", "two keys on one core: 8 lanes cost less than 2x4"},
		{[]*lanes.Kernel{ymm4, zmm8}, 6, 2, "ymm4 | ymm4", "two keys on two cores"},
		{[]*lanes.Kernel{ymm4, zmm8}, 9, 2, "zmm8 | ymm4", "three keys on two cores"},
		{[]*lanes.Kernel{ni1, ni2}, 6, 1, "ni2+ni2+ni2", "SHA-256 header key, pairs"},
		{[]*lanes.Kernel{ni1, ni2}, 1, 2, "ni1", "a lone chain"},
		{[]*lanes.Kernel{gen}, 6, 2, "gen+gen+gen | gen+gen+gen", "scalar: blocks spread over cores"},
		{[]*lanes.Kernel{ymm4, zmm8}, 8 * 40, 1, strings.Repeat("zmm8+", 39) + "zmm8", "a bulk of full groups"},
	} {
		if got := show(planGroups(c.n, c.ks, c.w)); got != c.want {
			t.Errorf("%d chains on %d cores (%s): plan %q, want %q", c.n, c.w, c.because, got, c.want)
		}
	}
}

// TestPBKDF2AgainstOpenSSL derives header keys with random passwords and
// salts through the dispatched path of every PRF with lanes and compares
// with `openssl kdf`.
func TestPBKDF2AgainstOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed (Debian package openssl)")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, prf := range []string{"SHA-512", "SHA-256", "BLAKE2s-256", "RIPEMD-160"} {
		for trial := 0; trial < 3; trial++ {
			pw := fmt.Sprintf("pw-%x", rng.Uint64())
			salt := make([]byte, 64)
			for i := range salt {
				salt[i] = byte(rng.Uint32())
			}
			iter := 1 + rng.IntN(3000)
			out, err := exec.Command("openssl", "kdf", "-keylen", "192", "-kdfopt", "digest:"+opensslDigest(prf),
				"-kdfopt", "pass:"+pw, "-kdfopt", fmt.Sprintf("hexsalt:%x", salt), "-kdfopt", fmt.Sprint("iter:", iter), "PBKDF2").Output()
			if err != nil && prf == "RIPEMD-160" {
				t.Logf("openssl kdf has no RIPEMD-160 here (OpenSSL 3.0.0-3.0.6 keep it in the legacy provider): %v", err)
				break
			}
			if err != nil {
				t.Fatalf("openssl kdf: %v", err)
			}
			want := strings.ToLower(strings.NewReplacer(":", "", "\n", "").Replace(string(out)))
			got, err := PBKDF2ByName(prf, []byte(pw), salt, iter, 192)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprintf("%x", got) != want {
				t.Fatalf("%s, %d iterations: got %x, openssl %s", prf, iter, got, want)
			}
		}
	}
}

// TestDispatchHonoursGODEBUG runs this test binary again with CPU
// features masked as GODEBUG does for the standard library, and checks
// that each mask selects the next path down and that it still derives
// the published vectors.
func TestDispatchHonoursGODEBUG(t *testing.T) {
	if os.Getenv("CRYPTVOL_PRINT_PATHS") != "" {
		fmt.Printf("SHA-512=%s\nSHA-256=%s\n", PBKDF2Path("SHA-512"), PBKDF2Path("SHA-256"))
		return
	}
	if runtime.GOARCH != "amd64" {
		t.Skip("the masked paths are amd64's (arm64 has NEON always)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ mask, sha512, sha256 string }
	// SHA-512's one-chain kernel comes first (narrowest); the masks here
	// leave BMI2 on, which it uses with AVX.
	const scalar512 = "scalar "
	var cases []want
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		cases = append(cases, want{"cpu.sha=off", scalar512 + "BMI2+AVX, 1 chain + AVX-512 ymm", "AVX-512 ymm"})
	}
	if cpu.X86.HasAVX2 {
		cases = append(cases, want{"cpu.avx512f=off,cpu.sha=off", scalar512 + "BMI2+AVX, 1 chain + AVX2", "AVX2"})
	}
	if cpu.X86.HasAVX {
		cases = append(cases, want{"cpu.avx512f=off,cpu.avx2=off,cpu.sha=off", scalar512 + "BMI2+AVX, 1 chain + AVX, 2 lanes", "AVX, 4 lanes"})
	}
	cases = append(cases, want{"cpu.all=off", "scalar SSE2, 1 chain", "generic Go"})
	for _, c := range cases {
		run := func(args ...string) string {
			cmd := exec.Command(exe, args...)
			cmd.Env = append(os.Environ(), "GODEBUG="+c.mask, "CRYPTVOL_PRINT_PATHS=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("GODEBUG=%s %v: %v\n%s", c.mask, args, err, out)
			}
			return string(out)
		}
		out := run("-test.run", "^TestDispatchHonoursGODEBUG$")
		if !strings.Contains(out, "SHA-512="+c.sha512) || !strings.Contains(out, "SHA-256="+c.sha256) {
			t.Errorf("GODEBUG=%s: paths\n%s\nwant SHA-512 %q..., SHA-256 %q...", c.mask, out, c.sha512, c.sha256)
		}
		cmd := exec.Command(exe, "-test.run", "^TestPBKDF2Vectors$", "-test.short")
		cmd.Env = append(os.Environ(), "GODEBUG="+c.mask)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GODEBUG=%s: vectors fail:\n%s", c.mask, out)
		}
	}
}

// TestPBKDF2Plan: the plan reported agrees with the kernels' costs: one
// SHA-512 block costs as much as three where the narrowest kernel has 3
// or more lanes (on amd64 the one-chain scalar kernel comes first, so
// there one block may cost less), more chains never cost less, and PRFs
// without lanes report the old one-block-per-goroutine rule.
func TestPBKDF2Plan(t *testing.T) {
	withParallel(t, 2)
	for _, prf := range []string{"SHA-512", "SHA-256", "BLAKE2s-256", "RIPEMD-160"} {
		lh, _ := laneHash(hashes.MustLookup(prf))
		ks := lanes.Kernels(lh)
		if ks == nil {
			continue
		}
		g1, t1 := PBKDF2Plan(prf, 500000, 1, 1)
		g3, t3 := PBKDF2Plan(prf, 500000, 192, 1)
		g9, t9 := PBKDF2Plan(prf, 500000, 192, 3)
		if g1 != 1 || t1 <= 0 || t3 < t1 || t9 < t3 || g3 < 1 || g9 > 2 {
			t.Errorf("%s: 1 block %d goroutines %.0f ns, header key %d/%.0f, three %d/%.0f", prf, g1, t1, g3, t3, g9, t9)
		}
		if prf == "SHA-512" && ks[0].Lanes >= 3 && t3 != t1 {
			t.Errorf("SHA-512 with %s: a header key costs %.0f ns an iteration, one block %.0f", ks[0].Name, t3, t1)
		}
	}
	if g, ns := PBKDF2Plan("Whirlpool", 500000, 192, 1); g != 2 || ns != 0 {
		t.Errorf("Whirlpool: %d goroutines, %v ns", g, ns)
	}
	if g, _ := PBKDF2Plan("Whirlpool", 1000, 192, 1); g != 1 {
		t.Errorf("Whirlpool, 1000 iterations: %d goroutines, want 1", g)
	}
}
