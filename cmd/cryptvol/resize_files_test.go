//go:build unix

package main

import (
	"crypto/sha256"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// putRandomFiles puts files f0.bin, f1.bin, ... of the given sizes (random
// bytes from seed) into the root of vol and returns their sha256s, for
// checkFiles.
func putRandomFiles(t *testing.T, env []string, dir, vol string, creds []string, seed int64, sizes ...int) map[string][32]byte {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	sums := map[string][32]byte{}
	for i, n := range sizes {
		b := make([]byte, n)
		rng.Read(b)
		name := fmt.Sprintf("f%d.bin", i)
		src := filepath.Join(dir, name)
		if err := os.WriteFile(src, b, 0o644); err != nil {
			t.Fatal(err)
		}
		cvOK(t, env, append([]string{"put", vol, src, "/"}, creds...)...)
		sums[name] = sha256.Sum256(b)
	}
	return sums
}

// checkFiles reads every file back with get and compares its sha256.
func checkFiles(t *testing.T, env []string, dir, vol string, creds []string, sums map[string][32]byte) {
	t.Helper()
	back := filepath.Join(dir, "back")
	for name, sum := range sums {
		os.Remove(back)
		r := cvRun(env, time.Minute, append([]string{"get", vol, "/" + name, back}, creds...)...)
		if r.code != 0 {
			t.Fatalf("get /%s: %v", name, r)
		}
		if b, _ := os.ReadFile(back); sha256.Sum256(b) != sum {
			t.Fatalf("%s: sha256 changed", name)
		}
	}
}
