//go:build unix

package main

// The power-cut explorer over the puts that give a FAT directory its room
// in one step (fat.FS.MakeRoom; issue 31, item 4): a new directory made
// with more than one cluster for the entries to come, its clusters zeroed
// and chained before the barrier of its mkdir, and an existing directory
// grown once before the first file. Every state opens, loses no file that
// was there, and holds each file of the put whole or not at all.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cryptvol/cryptvol/filesystem"
)

// roomFiles writes under dir/room the files of a put that outgrows one
// directory cluster: n files whose long names take four slots each. It
// returns their paths and each one's content by its volume path under
// into.
func roomFiles(t *testing.T, dir string, n int, into string) ([]string, map[string]string) {
	var paths []string
	made := map[string]string{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("holiday-photograph-number-%02d.jpeg", i)
		body := strings.Repeat(fmt.Sprintf("%d ", i), 50+i)
		p := filepath.Join(dir, "room", name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		made[into+"/"+name] = body
	}
	return paths, made
}

// TestCrashStatesPutRoom explores put -r of 40 files with long names into
// a new directory (made with its room: four clusters of the 8 MiB FAT
// volume's 2 KiB) and put of the same files into the existing /dir (grown
// once), in batches of four, on FAT in a VeraCrypt container (LUKS1 too
// with CRYPTVOL_CRASH_LONG=1).
func TestCrashStatesPutRoom(t *testing.T) {
	defer func(n int) { putBatchFiles = n }(putBatchFiles)
	putBatchFiles = 4
	for _, c := range crashContainers {
		if c.name != "veracrypt" && os.Getenv("CRYPTVOL_CRASH_LONG") == "" {
			continue
		}
		t.Run(c.name+"/fat", func(t *testing.T) {
			vol, pw, big, base := crashSetup(t, c, "fat")
			dir := filepath.Dir(big)
			files, inNew := roomFiles(t, dir, 40, "/room")
			inDir := map[string]string{}
			for n, body := range inNew {
				inDir["/dir"+strings.TrimPrefix(n, "/room")] = body
			}
			cases := []crashCase{
				{name: "put -r into a new directory", args: []string{"-r", filepath.Join(dir, "room"), "/"},
					atomic: func(fsys filesystem.FS) error { return wholeOrAbsent(fsys, inNew) },
					done:   func(fsys filesystem.FS) error { return allThere(fsys, inNew) }},
				{name: "put into an existing directory", args: append(append([]string{}, files...), "/dir"),
					atomic: func(fsys filesystem.FS) error { return wholeOrAbsent(fsys, inDir) },
					done:   func(fsys filesystem.FS) error { return allThere(fsys, inDir) }},
			}
			explorePuts(t, vol, pw, base, c, "fat", cases)
		})
	}
}
