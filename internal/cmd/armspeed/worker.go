package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/ciphers/aes"
	"github.com/cryptvol/cryptvol/ciphers/chacha20"
	"github.com/cryptvol/cryptvol/ciphers/serpent"
	"github.com/cryptvol/cryptvol/internal/cputime"
	"github.com/cryptvol/cryptvol/sector"
)

// worker runs in the guest: it measures cryptvol's AES and Serpent XTS
// (4 KiB buffers of 512-byte sectors, as a VeraCrypt volume is read) and
// ChaCha20 on 4 KiB buffers, in bytes per thread CPU second, mean of
// encrypt and decrypt, and prints "NAME RATE PATH" lines.
func worker(args []string) {
	seconds := 1.0
	if len(args) > 0 {
		seconds, _ = strconv.ParseFloat(args[0], 64)
	}
	d := time.Duration(seconds * float64(time.Second))
	for _, name := range []string{"AES", "Serpent"} {
		enc, err := measureXTS(name, false, d)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		dec, err := measureXTS(name, true, d)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		path := aes.Implementation()
		if name == "Serpent" {
			path = serpent.Implementation()
		}
		fmt.Printf("%s %g %s\n", name, (enc+dec)/2, path)
	}
	fmt.Printf("ChaCha20 %g %s\n", measureChaCha(d), chachaPath())
}

func chachaPath() string {
	p := chacha20.Implementation()
	if p == "golang.org/x/crypto/chacha20" {
		return "x/crypto"
	}
	return p
}

const bufSize, sectorSize = 4096, 512

// timed runs op on one locked OS thread for about d of wall time after a
// warm-up and returns the bytes per CPU second of that thread.
func timed(d time.Duration, op func()) float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 100 {
		op()
	}
	cpu0, wall0 := cputime.ThreadSeconds(), time.Now()
	calls := 0
	for time.Since(wall0) < d {
		for range 16 {
			op()
			calls++
		}
	}
	cpu := cputime.ThreadSeconds() - cpu0
	if cpu <= 0 {
		cpu = time.Since(wall0).Seconds()
	}
	return float64(calls) * bufSize / cpu
}

func measureXTS(name string, decrypt bool, d time.Duration) (float64, error) {
	c, err := ciphers.LookupChain(name)
	if err != nil {
		return 0, err
	}
	n, err := sector.ChainKeySize(c)
	if err != nil {
		return 0, err
	}
	key := make([]byte, n)
	rand.Read(key)
	m, err := sector.ChainXTS(c, key, sectorSize)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, bufSize)
	rand.Read(buf)
	var unit uint64
	op := func() { m.Encrypt(buf, buf, unit); unit++ }
	if decrypt {
		op = func() { m.Decrypt(buf, buf, unit); unit++ }
	}
	return timed(d, op), nil
}

func measureChaCha(d time.Duration) float64 {
	key := make([]byte, chacha20.KeySize)
	rand.Read(key)
	c, _ := chacha20.New(key, make([]byte, chacha20.NonceSize), 0)
	buf := make([]byte, bufSize)
	return timed(d, func() { c.XORKeyStream(buf, buf) })
}
