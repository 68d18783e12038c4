//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/crashsim"
	"github.com/cryptvol/cryptvol/volume"
)

// TestPutFlushCost measures (CRYPTVOL_FLUSH_COST=1) what put's flushes
// cost: 1,000 small files into FAT with the container's flushes and with
// them dropped (issue 31, item 4). It reports; it asserts no time.
func TestPutFlushCost(t *testing.T) {
	if os.Getenv("CRYPTVOL_FLUSH_COST") == "" {
		t.Skip("set CRYPTVOL_FLUSH_COST=1 to measure put's flush cost")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("crash-pass\n"), 0o600)
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	for i := 0; i < 1000; i++ {
		os.WriteFile(filepath.Join(src, fmt.Sprintf("f%04d.txt", i)), []byte(fmt.Sprintf("small file %d\n", i)), 0o644)
	}
	c := crashContainers[0]
	vol := filepath.Join(dir, "v.hc")
	cvIn(t, append([]string{"create", vol, "--size", "32M", "--password-file", pw, "--quick", "--non-interactive", "--filesystem", "fat"}, c.create...)...)
	base, _ := os.ReadFile(vol)
	measure := func(vol string, base []byte, args []string, rounds int, drop bool) (time.Duration, int) {
		var best time.Duration
		flushes := 0
		for round := 0; round < rounds; round++ {
			os.WriteFile(vol, base, 0o600)
			// The restored image and the last round's pages on the
			// disk first: each round pays only for its own writes.
			syscall.Sync()
			var rec *crashsim.Recorder
			testWrapDevice = func(d volume.Device) volume.Device {
				rec = crashsim.NewRecorder(d)
				if drop {
					rec.DropFlush = func(int) bool { return true }
				}
				return rec
			}
			start := time.Now()
			cvIn(t, append(args, c.flags...)...)
			d := time.Since(start)
			testWrapDevice = nil
			if best == 0 || d < best {
				best = d
			}
			flushes = rec.Flushes()
		}
		return best, flushes
	}
	small := []string{"put", vol, "-r", src, "/", "--password-file", pw}
	with, n := measure(vol, base, small, 3, false)
	without, _ := measure(vol, base, small, 3, true)
	t.Logf("put of 1,000 small files into FAT: %v with its %d flushes, %v without (best of 3): ratio %.3f", with, n, without, float64(with)/float64(without))

	// One 1 GiB file into exFAT (FAT32 caps a file at 4 GiB, but exFAT is
	// what a 1 GiB file meets on a stick). Without flushes the written
	// pages are left dirty: measure syncs the page cache before each
	// round so that one round's write-back does not land in the next.
	bigVol := filepath.Join(dir, "big.hc")
	cvIn(t, append([]string{"create", bigVol, "--size", "1100M", "--password-file", pw, "--quick", "--non-interactive", "--filesystem", "exfat"}, c.create...)...)
	bigBase, _ := os.ReadFile(bigVol)
	bigSrc := filepath.Join(dir, "big.bin")
	f, err := os.Create(bigSrc)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	for i := 0; i < 1024; i++ {
		chunk[0] = byte(i)
		f.Write(chunk)
	}
	f.Close()
	big := []string{"put", bigVol, bigSrc, "/big.bin", "--password-file", pw}
	with, n = measure(bigVol, bigBase, big, 2, false)
	without, _ = measure(bigVol, bigBase, big, 2, true)
	t.Logf("put of a 1 GiB file into exFAT: %v with its %d flushes, %v without (best of 2): ratio %.3f", with, n, without, float64(with)/float64(without))
}
