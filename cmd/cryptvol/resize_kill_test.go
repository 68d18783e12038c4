//go:build linux && (amd64 || arm64)

package main

import (
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestResizeKilled kills `cryptvol resize` (the real command, under
// killat) at its file-changing system calls, a grow and a shrink by a
// relative size (+12M, -8M), of VeraCrypt containers with FAT, exFAT, ext4
// and NTFS inside, a TrueCrypt one with FAT and a LUKS2 one with ext4.
// After each kill the container must open with its old or its new data
// size and every file must read back with its sha256; the same command
// run again (the same relative size: the record beside the container
// keeps the target) must finish: the new size, every file, the
// filesystem's checker clean on the exported area. For ext4 and NTFS a
// kill while resize2fs's or ntfsresize's result is copied in from its
// journal is finished by the next open of the container (the export's):
// the files are checked there too, and the journal must be gone.
//
// The default run kills at 2 points per format and direction (4 for
// VeraCrypt and TrueCrypt FAT), spread over all of the command's writes;
// CRYPTVOL_RESIZE_KILLS=N kills at N random points each (every point when
// N is at least their number).
func TestResizeKilled(t *testing.T) {
	needCLI(t)
	if err := killAtSupported(); err != nil {
		t.Skip(err)
	}
	kills, spread := 0, true
	if s := os.Getenv("CRYPTVOL_RESIZE_KILLS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("CRYPTVOL_RESIZE_KILLS=%q: want a positive number", s)
		}
		kills, spread = n, false
	}
	for _, c := range []struct {
		typ, fs string
		kills   int
	}{{"veracrypt", "fat", 4}, {"truecrypt", "fat", 4}, {"veracrypt", "exfat", 2}, {"veracrypt", "ext4", 2}, {"veracrypt", "ntfs", 2}, {"luks2", "ext4", 2}} {
		for _, dir := range []struct{ name, size string }{{"grow", "+12M"}, {"shrink", "-8M"}} {
			t.Run(c.typ+"-"+c.fs+"-"+dir.name, func(t *testing.T) {
				needFSTools(t, fsChecker[c.fs][0])
				if tool := map[string]string{"ext4": "resize2fs", "ntfs": "ntfsresize"}[c.fs]; tool != "" {
					needFSTools(t, tool, "mkntfs")
					needDriverWrites(t, c.fs)
				}
				n := kills
				if n == 0 {
					n = c.kills
				}
				testResizeKilled(t, c.typ, c.fs, dir.size, n, spread)
			})
		}
	}
}

func testResizeKilled(t *testing.T, typ, fsName, target string, kills int, spread bool) {
	dir := t.TempDir()
	env := cvEnviron(filepath.Join(dir, "run"), filepath.Join(dir, "tmp"))
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("kill me softly, twenty+ chars\n"), 0o600)
	creds := []string{"--password-file", pw}
	mk := []string{"--type", typ}
	switch typ {
	case "veracrypt":
		creds = append(creds, "--pim", "1")
	case "luks2":
		mk = append(mk, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000")
	}
	size := "20M"
	if typ == "luks2" {
		size = "40M" // its 16 MiB header and a data area ext4 can shrink
	}
	fresh := filepath.Join(dir, "fresh.vol")
	cvOK(t, env, append(append([]string{"create", fresh, "--size", size, "--filesystem", fsName, "--quick", "--non-interactive"}, mk...), creds...)...)
	seed := int64(len(typ) + len(fsName) + len(target))
	sums := putRandomFiles(t, env, dir, fresh, creds, seed, 2<<20, 300<<10, 4321)
	rng := rand.New(rand.NewSource(seed)) // the kill points
	exported := filepath.Join(dir, "plain")
	cvOK(t, env, append([]string{"export", fresh, exported}, creds...)...)
	fi, _ := os.Stat(fresh)
	pi, _ := os.Stat(exported)
	oldData := pi.Size()
	amount, _ := parseSize(target[1:])
	newSize := fi.Size() + amount
	if target[0] == '-' {
		newSize = fi.Size() - amount
	}
	newData := newSize - (fi.Size() - oldData)
	external := fsName == "ext4" || fsName == "ntfs"
	vol := filepath.Join(dir, "v.vol")
	args := append([]string{"resize", vol, "--size", target, "--no-hidden"}, creds...)
	if typ == "luks2" {
		args = append([]string{"resize", vol, "--size", target}, creds...)
	}
	// How many file-changing calls a whole run makes.
	copySparse(fresh, vol)
	r, _, calls, _, trace := runKillableTrace(dir, env, runToEnd, args, true)
	if r.code != 0 || calls < 2 {
		t.Fatalf("resize under killat: %v (%d file-changing calls)", r, calls)
	}
	copyIn := int64(0)
	if external {
		if copyIn = copyInPoint(trace, vol); copyIn == 0 {
			t.Fatalf("no copy-in of the %s tool's journal in the trace of the resize (%d calls)", fsName, len(trace))
		}
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
	if copyIn != 0 && spread {
		points = append(points, copyIn) // the short run aims one kill at the copy-in
	}
	landed, copyKills := 0, 0
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
		rec, _ := os.ReadFile(vol + ".cryptvol-resize")
		inCopy := external && strings.Contains(string(rec), `"journal":true`)
		os.Remove(exported)
		cvOK(t, env, append([]string{"export", vol, exported}, creds...)...)
		fi, _ := os.Stat(exported)
		if fi.Size() != oldData && fi.Size() != newData {
			t.Fatalf("killed at call %d (%s): the data area is %d bytes, neither the old %d nor the new %d", p, call, fi.Size(), oldData, newData)
		}
		checkFiles(t, env, dir, vol, creds, sums)
		if inCopy {
			// Killed while the tool's result was copied in: the open
			// (the export's) copied it in again.
			copyKills++
			rec, _ := os.ReadFile(vol + ".cryptvol-resize")
			if _, err := os.Stat(vol + ".cryptvol-resize-journal"); err == nil || strings.Contains(string(rec), `"journal":true`) {
				t.Fatalf("killed at call %d (%s) while the journal was copied in: the next open did not copy it in (record %s)", p, call, rec)
			}
		}
		_, recErr := os.Stat(vol + ".cryptvol-resize")
		if st, _ := os.Stat(vol); recErr == nil || st.Size() != newSize {
			// Unfinished (a finished run's record is gone: a kill after
			// its last change, at the exit's clean-up, leaves nothing to
			// do, and the relative size would be applied once more).
			cvOK(t, env, args...)
		}
		if st, _ := os.Stat(vol); st.Size() != newSize {
			t.Fatalf("killed at call %d (%s), run again: the container is %d bytes, want %d", p, call, st.Size(), newSize)
		}
		checkFiles(t, env, dir, vol, creds, sums)
		os.Remove(exported)
		cvOK(t, env, append([]string{"export", vol, exported}, creds...)...)
		runChecker(t, fsName, exported)
		for _, leftover := range []string{".cryptvol-resize", ".cryptvol-resize-journal"} {
			if _, err := os.Stat(vol + leftover); err == nil {
				t.Fatalf("killed at call %d (%s), run again: %s left behind", p, call, vol+leftover)
			}
		}
	}
	t.Logf("%s %s %s: %d kills landed among %d file-changing calls (%d while the journal was copied in); each left the old or the new size with every file, and the next resize finished", typ, fsName, target, landed, calls, copyKills)
}

// copyInPoint returns the kill point (the 1-based number of the call) of
// the middle one of resize's writes into the container at vol after the
// external tool's journal was synced and before the container is synced:
// the journal's copy-in (resize/record.go). 0 if the trace shows none.
func copyInPoint(trace []string, vol string) int64 {
	journal := vol + ".cryptvol-resize-journal"
	synced := -1
	for i, c := range trace {
		if c == "fsync("+journal+")" || c == "fdatasync("+journal+")" {
			synced = i
		}
	}
	if synced < 0 {
		return 0
	}
	var writes []int
	for i := synced + 1; i < len(trace); i++ {
		if trace[i] == "fsync("+vol+")" || trace[i] == "fdatasync("+vol+")" {
			break
		}
		if strings.HasPrefix(trace[i], "pwrite64("+vol+",") {
			writes = append(writes, i)
		}
	}
	if len(writes) == 0 {
		return 0
	}
	return int64(writes[len(writes)/2] + 1)
}
