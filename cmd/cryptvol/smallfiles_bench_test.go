package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// BenchmarkSmallFilesInVolume copies 1,000 files of 3-10 KB into the FAT
// filesystem of an encrypted VeraCrypt volume (AES, a container file on
// this disk) and reads them back, and does the same with a plain directory
// on the same disk, in the same run. x-plain-dir is the ratio of the two
// (the goal is at most 3).
//
//	go test -run XXX -bench SmallFilesInVolume ./cmd/cryptvol
func BenchmarkSmallFilesInVolume(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	files := make([][]byte, 1000)
	for i := range files {
		files[i] = make([]byte, 3000+rng.Intn(7001))
		rng.Read(files[i])
	}
	dir := b.TempDir()
	path := filepath.Join(dir, "v.hc")
	if err := createFile(nil, path, 64<<20, func(dev *volume.FileDevice) error {
		cr, err := tcrypt.Create(context.Background(), dev, volume.Credentials{Password: []byte("bench"), PIM: 1}, tcrypt.CreateOptions{Quick: true})
		if err != nil {
			return err
		}
		return formatNew(context.Background(), nil, dev, cr.Unlocked, &formatSpec{fs: "fat"})
	}); err != nil {
		b.Fatal(err)
	}
	var inVol, plain time.Duration
	for i := 0; i < b.N; i++ {
		// Through the encrypted volume: open, write all, reopen, read all.
		start := time.Now()
		v, err := volume.OpenWith(context.Background(), path, volume.Credentials{Password: []byte("bench"), PIM: 1}, volume.Options{Hash: "SHA-512"})
		if err != nil {
			b.Fatal(err)
		}
		openTime := time.Since(start) // the key derivation is not part of the copy
		ffs, err := fat.Open(v, v.Size())
		if err != nil {
			b.Fatal(err)
		}
		sub := fmt.Sprintf("/run%d", i)
		ffs.Mkdir(sub)
		for j, f := range files {
			if err := ffs.WriteFile(fmt.Sprintf("%s/f%04d.jpg", sub, j), f, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for j := range files {
			if _, err := ffs.ReadFile(fmt.Sprintf("%s/f%04d.jpg", sub, j)); err != nil {
				b.Fatal(err)
			}
		}
		ffs.Close()
		v.Close()
		inVol += time.Since(start) - openTime

		// The same with a plain directory.
		start = time.Now()
		pd := filepath.Join(dir, fmt.Sprintf("plain%d", i))
		os.Mkdir(pd, 0o755)
		for j, f := range files {
			if err := os.WriteFile(filepath.Join(pd, fmt.Sprintf("f%04d.jpg", j)), f, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		for j := range files {
			if _, err := os.ReadFile(filepath.Join(pd, fmt.Sprintf("f%04d.jpg", j))); err != nil {
				b.Fatal(err)
			}
		}
		plain += time.Since(start)
	}
	b.ReportMetric(inVol.Seconds()/float64(b.N), "volume-s")
	b.ReportMetric(plain.Seconds()/float64(b.N), "plain-s")
	b.ReportMetric(float64(inVol)/float64(plain), "x-plain-dir")
}
