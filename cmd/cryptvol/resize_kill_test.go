//go:build linux && (amd64 || arm64)

package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestResizeKilled kills `cryptvol resize` (the real command, under
// killat) at its file-changing system calls, a grow and a shrink of a
// VeraCrypt and a TrueCrypt container with FAT inside. After each kill the
// container must open with its old or its new data size and every file
// must read back with its sha256; the same command run again must finish:
// the new size, every file, fsck.fat clean on the exported area.
//
// The default run kills at 4 points per format and direction, spread
// over all of the command's writes; CRYPTVOL_RESIZE_KILLS=N kills at N
// random points each (every point when N is at least their number).
func TestResizeKilled(t *testing.T) {
	needCLI(t)
	needFSTools(t, "fsck.fat")
	if err := killAtSupported(); err != nil {
		t.Skip(err)
	}
	kills, spread := 4, true
	if s := os.Getenv("CRYPTVOL_RESIZE_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRYPTVOL_RESIZE_KILLS=%q: want a positive number", s)
		}
		kills, spread = n, false
	}
	for _, typ := range []string{"veracrypt", "truecrypt"} {
		for _, dir := range []struct{ name, size string }{{"grow", "32M"}, {"shrink", "12M"}} {
			t.Run(typ+"-"+dir.name, func(t *testing.T) { testResizeKilled(t, typ, dir.size, kills, spread) })
		}
	}
}

func testResizeKilled(t *testing.T, typ, target string, kills int, spread bool) {
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("kill me softly\n"), 0o600)
	creds := []string{"--password-file", pw}
	if typ == "veracrypt" {
		creds = append(creds, "--pim", "1")
	}
	fresh := filepath.Join(dir, "fresh.vol")
	cvOK(t, env, append([]string{"create", fresh, "--size", "20M", "--filesystem", "fat", "--quick", "--non-interactive", "--type", typ}, creds...)...)
	seed := int64(len(typ) + len(target))
	sums := putRandomFiles(t, env, dir, fresh, creds, seed, 2<<20, 300<<10, 4321)
	rng := rand.New(rand.NewSource(seed)) // the kill points
	oldData, _ := parseSize("20M")
	newSize, _ := parseSize(target)
	oldData -= 2 * 131072
	newData := newSize - 2*131072
	vol := filepath.Join(dir, "v.vol")
	args := append([]string{"resize", vol, "--size", target, "--no-hidden"}, creds...)

	// How many file-changing calls a whole run makes.
	copySparse(fresh, vol)
	r, _, calls, _ := runKillable(dir, env, runToEnd, args, true)
	if r.code != 0 || calls < 2 {
		t.Fatalf("resize under killat: %v (%d file-changing calls)", r, calls)
	}
	var points []int64
	switch {
	case spread:
		for i := 0; i < kills; i++ {
			points = append(points, 1+int64(i)*(calls-1)/int64(max(kills-1, 1)))
		}
	case int64(kills) >= calls:
		for p := int64(1); p <= calls; p++ {
			points = append(points, p)
		}
	default:
		for i := 0; i < kills; i++ {
			points = append(points, 1+rng.Int63n(calls))
		}
	}
	exported := filepath.Join(dir, "plain")
	landed := 0
	for _, p := range points {
		os.Remove(vol)
		copySparse(fresh, vol)
		r, killed, _, call := runKillable(dir, env, killPoint{delay: -1, writes: p}, args, true)
		if !killed && r.code == 0 {
			// The counting run made a call this one did not (the
			// runtime directory made once): it finished first.
			continue
		}
		if !killed {
			t.Fatalf("kill at call %d of %d did not land: %v", p, calls, r)
		}
		landed++
		os.Remove(exported)
		cvOK(t, env, append([]string{"export", vol, exported}, creds...)...)
		fi, _ := os.Stat(exported)
		if fi.Size() != oldData && fi.Size() != newData {
			t.Fatalf("killed at call %d (%s): the data area is %d bytes, neither the old %d nor the new %d", p, call, fi.Size(), oldData, newData)
		}
		checkFiles(t, env, dir, vol, creds, sums)
		cvOK(t, env, args...)
		if st, _ := os.Stat(vol); st.Size() != newSize {
			t.Fatalf("killed at call %d (%s), run again: the container is %d bytes, want %d", p, call, st.Size(), newSize)
		}
		checkFiles(t, env, dir, vol, creds, sums)
		os.Remove(exported)
		cvOK(t, env, append([]string{"export", vol, exported}, creds...)...)
		runChecker(t, "fat", exported)
	}
	t.Logf("%s to %s: %d kills landed among %d file-changing calls; each left the old or the new size with every file, and the next resize finished", typ, target, landed, calls)
}
