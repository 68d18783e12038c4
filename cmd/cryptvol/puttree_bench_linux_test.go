package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// BenchmarkPutTree copies 1,000 files of 3-10 KB into an ext4, an exFAT
// and a FAT filesystem inside a VeraCrypt volume (AES, a container file
// on this disk) with `cryptvol put -r` run in process, and the same files
// into a plain directory on the same disk (read, write, set the time:
// what cp -p does), alternating in the same run. x-plain-dir is the ratio
// (issue 25's goal for ext4: at most 1.5); put flushes before it says
// done, so x-plain-synced compares with the plain copy followed by one
// syncfs of its disk as well. The volume's key derivation is measured
// apart and left out, as in BenchmarkGetTree.
//
//	go test -run XXX -bench PutTree ./cmd/cryptvol
func BenchmarkPutTree(b *testing.B) {
	dir := b.TempDir()
	src := smallFiles(b, dir)
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("bench\n"), 0o600)
	creds := volume.Credentials{Password: []byte("bench"), PIM: 1}
	for _, kind := range []string{"ext4", "exfat", "fat"} {
		b.Run(kind, func(b *testing.B) {
			vol := filepath.Join(dir, kind+".hc")
			benchVolume(b, vol, 96<<20, creds, &formatSpec{fs: kind, fatType: "fat"}, false)
			var inVol, plain, synced, open time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				v, err := volume.OpenWith(context.Background(), vol, creds, volume.Options{Hash: "SHA-512", ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				v.Close()
				open += time.Since(start)

				start = time.Now()
				if code, _, errOut := runCLI("put", vol, src, fmt.Sprintf("/run%d", i), "-r", "--password-file", pw, "--pim", "1", "--hash", "SHA-512", "--encryption", "AES"); code != 0 {
					b.Fatalf("put -r: exit %d: %s", code, errOut)
				}
				inVol += time.Since(start)

				pd := filepath.Join(dir, fmt.Sprintf("%s-plain%d", kind, i))
				start = time.Now()
				if err := copyPlain(src, pd); err != nil {
					b.Fatal(err)
				}
				plain += time.Since(start)
				if err := syncfs(pd); err != nil {
					b.Fatal(err)
				}
				synced += time.Since(start)
				b.StopTimer()
				os.RemoveAll(pd)
				b.StartTimer()
			}
			inVol -= open
			b.ReportMetric(inVol.Seconds()/float64(b.N), "volume-s")
			b.ReportMetric(plain.Seconds()/float64(b.N), "plain-s")
			b.ReportMetric(open.Seconds()/float64(b.N), "unlock-s")
			b.ReportMetric(float64(inVol)/float64(plain), "x-plain-dir")
			b.ReportMetric(float64(inVol)/float64(synced), "x-plain-synced")
		})
	}
}

// syncfs flushes the filesystem holding dir, as put's final flush does
// for the volume.
func syncfs(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// BenchmarkPutLargeFile puts one 1 GiB file into an ext4 filesystem in a
// VeraCrypt volume (AES; room for two, since --force keeps the old one
// until the new is complete) and writes 1 GiB sequentially into the data area
// of a volume made the same way (1 MiB writes through volume.Volume, then
// a flush):
// x-volume-speed is put's speed over that (issue 25's goal: at least
// 0.8), both in the same run; x-hinted-volume-speed over the same pass
// with put's writeback hints. CRYPTVOL_PUT_MIB sets the size.
//
//	go test -run XXX -bench PutLargeFile -benchtime 1x ./cmd/cryptvol
func BenchmarkPutLargeFile(b *testing.B) {
	size := int64(1024)
	if s := os.Getenv("CRYPTVOL_PUT_MIB"); s != "" {
		fmt.Sscan(s, &size)
	}
	size <<= 20
	dir := b.TempDir()
	src := filepath.Join(dir, "big.bin")
	f, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	chunk := make([]byte, 1<<20)
	for n := int64(0); n < size; n += int64(len(chunk)) {
		rng.Read(chunk)
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("bench\n"), 0o600)
	creds := volume.Credentials{Password: []byte("bench"), PIM: 1}
	vol := filepath.Join(dir, "v.hc")
	// Both containers are filled end to end, as create does unless
	// --quick: a write into a sparse or fallocated (unwritten) stretch
	// costs the host filesystem an allocation or a conversion an
	// overwrite does not, and from the second iteration on the raw pass
	// overwrites its first one's blocks while put writes into blocks its
	// first iteration did not touch (the same code measured 0.56-0.93
	// with quick containers, 0.86-1.35 with filled ones).
	benchVolume(b, vol, 2*size+size/4+(64<<20), creds, &formatSpec{fs: "ext4"}, true)
	// The raw pass writes into a second volume made the same way: in
	// the first it would overwrite the filesystem (its journal, say).
	rawVol := filepath.Join(dir, "raw.hc")
	benchVolume(b, rawVol, size+size/4+(64<<20), creds, nil, true)
	var put, raw, hinted, open time.Duration
	for i := 0; i < b.N; i++ {
		// Each pass starts with no dirty pages of this disk in the host's
		// cache: else one pays for the writeback of what came before it
		// (the source file, the other pass's volume).
		b.StopTimer()
		if err := syncfs(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		v, err := volume.OpenWith(context.Background(), vol, creds, volume.Options{Hash: "SHA-512", ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		v.Close()
		open += time.Since(start)

		start = time.Now()
		if code, _, errOut := runCLI("put", vol, src, "/big.bin", "--force", "--password-file", pw, "--pim", "1", "--hash", "SHA-512", "--encryption", "AES"); code != 0 {
			b.Fatalf("put: exit %d: %s", code, errOut)
		}
		put += time.Since(start)

		v, err = volume.OpenWith(context.Background(), rawVol, creds, volume.Options{Hash: "SHA-512"})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := syncfs(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start = time.Now()
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if _, err := v.WriteAt(chunk, n); err != nil {
				b.Fatal(err)
			}
		}
		if err := v.Sync(); err != nil {
			b.Fatal(err)
		}
		raw += time.Since(start)
		// The same pass with the writeback hints put's ext4 writer
		// gives (every 8 MiB behind itself): the reference put gets no
		// edge over.
		b.StopTimer()
		if err := syncfs(dir); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start = time.Now()
		const hintStep = 8 << 20
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if _, err := v.WriteAt(chunk, n); err != nil {
				b.Fatal(err)
			}
			if end := n + int64(len(chunk)); end%hintStep == 0 {
				v.StartWriteback(end-hintStep, hintStep)
			}
		}
		if err := v.Sync(); err != nil {
			b.Fatal(err)
		}
		hinted += time.Since(start)
		v.Close()
	}
	put -= open
	b.ReportMetric(float64(size)/(1<<20)/put.Seconds()*float64(b.N), "put-MiB/s")
	b.ReportMetric(float64(size)/(1<<20)/raw.Seconds()*float64(b.N), "volume-MiB/s")
	b.ReportMetric(raw.Seconds()/put.Seconds(), "x-volume-speed")
	b.ReportMetric(hinted.Seconds()/put.Seconds(), "x-hinted-volume-speed")
}

// benchVolume creates a VeraCrypt volume (AES; its data area filled with
// ciphertext when fill, else quick: sparse) of size bytes at path with the
// filesystem of spec (nil: none).
func benchVolume(b *testing.B, path string, size int64, creds volume.Credentials, spec *formatSpec, fill bool) {
	if err := createFile(nil, path, size, func(dev *volume.FileDevice) error {
		cr, err := tcrypt.Create(context.Background(), dev, creds, tcrypt.CreateOptions{Quick: !fill})
		if err != nil || spec == nil {
			return err
		}
		return formatNew(context.Background(), &app{stderr: os.Stderr}, dev, cr.Unlocked, spec)
	}); err != nil {
		b.Fatal(err)
	}
}
