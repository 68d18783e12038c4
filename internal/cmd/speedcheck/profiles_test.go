package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/cryptvol/cryptvol/ciphers"
)

// TestHelperPaths is the child of TestProfilesSwitchPaths: it prints the
// code path of every cipher of the table as this process (started with a
// GODEBUG mask) sees it.
func TestHelperPaths(t *testing.T) {
	if os.Getenv("SPEEDCHECK_PATHS_CHILD") != "1" {
		t.Skip("helper of TestProfilesSwitchPaths")
	}
	for _, tc := range tableCiphers {
		s, err := ciphers.Lookup(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("path %s=%s\n", tc.name, s.Implementation())
	}
}

// TestProfilesSwitchPaths runs the helper under every profile's GODEBUG
// mask and checks that each cipher takes the path that class of CPU would
// take (as far as this machine has the features: masks only remove them),
// so that the profiles of the table, and the CI stage that runs the vector
// tests once per profile, test what they claim to.
func TestProfilesSwitchPaths(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the profiles are x86 CPU classes")
	}
	paths := map[string]map[string]string{}
	for _, p := range profiles {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperPaths$", "-test.v")
		cmd.Env = append(os.Environ(), "SPEEDCHECK_PATHS_CHILD=1", "GODEBUG="+p.godebug)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("profile %s: %v\n%s", p.name, err, out)
		}
		paths[p.name] = map[string]string{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			if name, impl, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "path "), "="); ok && strings.HasPrefix(sc.Text(), "path ") {
				paths[p.name][name] = impl
			}
		}
		if len(paths[p.name]) != len(tableCiphers) {
			t.Fatalf("profile %s: helper printed %d paths:\n%s", p.name, len(paths[p.name]), out)
		}
		t.Logf("%-9s %v", p.name, paths[p.name])
	}

	aesni := cpu.X86.HasAES && cpu.X86.HasSSE41
	avx2 := cpu.X86.HasAVX2
	full := paths["full"]["AES"]
	vaes := avx2 && strings.HasPrefix(full, "vaes-")
	pick := func(cond bool, yes, no string) string {
		if cond {
			return yes
		}
		return no
	}
	want := map[[2]string]string{
		{"sse2", "AES"}:         "sse2-bitsliced",
		{"aesni", "AES"}:        pick(aesni, "aes-ni", "sse2-bitsliced"),
		{"avx2", "AES"}:         pick(aesni, "aes-ni", "sse2-bitsliced"),
		{"avx2vaes", "AES"}:     pick(aesni && vaes, "vaes-avx2", pick(aesni, "aes-ni", "sse2-bitsliced")),
		{"sse2", "Serpent"}:     "sse2",
		{"aesni", "Serpent"}:    "sse2",
		{"avx2", "Serpent"}:     pick(avx2, "avx2", "sse2"),
		{"avx2vaes", "Serpent"}: pick(avx2, "avx2", "sse2"),
	}
	for k, w := range want {
		if got := paths[k[0]][k[1]]; got != w {
			t.Errorf("profile %s: %s runs %q, want %q", k[0], k[1], got, w)
		}
	}
	// Without AVX-512 no cipher may take an AVX-512 or GFNI path, and
	// with everything masked each takes its portable one.
	avx512 := regexp.MustCompile(`(?i)avx-?512|gfni`)
	for _, p := range profiles[:len(profiles)-1] {
		for name, impl := range paths[p.name] {
			if avx512.MatchString(impl) {
				t.Errorf("profile %s: %s runs %q", p.name, name, impl)
			}
		}
	}
	for _, name := range []string{"Twofish", "Camellia", "Kuznyechik"} {
		if impl := paths["sse2"][name]; !strings.HasPrefix(impl, "generic") {
			t.Errorf("profile sse2: %s runs %q, want its generic path", name, impl)
		}
	}
}
