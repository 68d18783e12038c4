package fat

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
)

// TestMakeRoom gives a new directory, the same one again, and one that
// existed the room for 20 files with long names (five slots each, more
// than a cluster holds): MakeRoom costs the one barrier of its
// mkdir (or of its growth) and the files then go in without a flush,
// where the directory filling as they come grew for a barrier each time.
// Every state a kill inside MakeRoom or a power cut anywhere leaves
// recovers with the files there before intact and no errors after a
// repair.
func TestMakeRoom(t *testing.T) {
	_, fsckErr := exec.LookPath("fsck.fat")
	for _, c := range repairTypes {
		t.Run(c.typ.String(), func(t *testing.T) {
			base := newMemDev(t, c.size)
			mustFormat(t, base, c.size, FormatOptions{Type: c.typ, ClusterSize: c.cluster})
			fs := mustOpen(t, base, c.size)
			before := map[string][]byte{"/keep.bin": pattern(7, 3*c.cluster), "/photos/old.bin": pattern(8, c.cluster)}
			// Free clusters that hold old data, where an entry that is
			// not zeroed first would read as garbage.
			mustWrite(t, fs, "/garbage.bin", bytes.Repeat([]byte{0x41}, 200*c.cluster))
			if err := fs.Remove("/garbage.bin"); err != nil {
				t.Fatal(err)
			}
			if err := fs.Mkdir("/photos"); err != nil {
				t.Fatal(err)
			}
			for n, body := range before {
				mustWrite(t, fs, n, body)
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}

			work, rec, fs := openRecorded(t, base, c.size)
			all := map[string][]byte{}
			var windows [][2]int // the writes of each MakeRoom, and the first after
			// A new directory made with its room, the same grown (its
			// deleted slots, skipped so that no entry straddles a sector,
			// are too short to reuse), and a directory that existed.
			for round, dir := range []string{"new", "new", "photos"} {
				var names []string
				for i := 0; i < 20; i++ {
					names = append(names, fmt.Sprintf("Photograph number %d-%02d of the holiday.jpeg", round, i))
				}
				f0, w0 := rec.Flushes(), crashsim.Writes(rec.Ops())
				if err := fs.MakeRoom("/"+dir, names); err != nil {
					t.Fatal(err)
				}
				windows = append(windows, [2]int{w0, crashsim.Writes(rec.Ops()) + 1})
				if n := rec.Flushes() - f0; n != 1 {
					t.Errorf("round %d: MakeRoom flushed %d times, not once", round, n)
				}
				f0 = rec.Flushes()
				for i, n := range names {
					p := "/" + dir + "/" + n
					all[p] = pattern(round*100+i, 100+i)
					mustWrite(t, fs, p, all[p])
				}
				if n := rec.Flushes() - f0; n != 0 {
					t.Errorf("round %d: the files after MakeRoom flushed %d times (the directory grew)", round, n)
				}
			}
			// The FAT12/16 root does not grow, and is no error.
			if err := fs.MakeRoom("/", []string{"one more file with a long name.txt"}); err != nil {
				t.Errorf("MakeRoom of the root: %v", err)
			}
			if err := fs.Close(); err != nil {
				t.Fatal(err)
			}
			check := mustOpen(t, work, c.size)
			if err := sameFiles(check, all); err != nil {
				t.Fatal(err)
			}
			if rep, err := check.Check(false); err != nil || rep.Errors() {
				t.Fatalf("check after the puts: %v\n%s", err, rep)
			}
			check.Close()

			ops := rec.Ops()
			failed := 0
			fail := func(s crashsim.State, err error) {
				failed++
				if failed <= 5 {
					t.Errorf("%s: %v", s.Name, err)
				}
			}
			// Kills inside MakeRoom (the files' own writes are the
			// other tests'), and power cuts anywhere.
			var kills []crashsim.State
			for _, s := range crashsim.KillStates(ops) {
				for _, w := range windows {
					if n := len(s.Writes); n >= w[0] && n <= w[1] {
						kills = append(kills, s)
						break
					}
				}
			}
			for _, s := range kills {
				if err := judgeKillState(t, base.Data, s, before, fsckErr == nil); err != nil {
					fail(s, err)
				}
			}
			cuts := crashsim.States(ops, crashsim.Options{Subsets: 1, Torn: 1, Seed: 1, Distinct: true})
			for _, s := range cuts {
				if err := judgeCutState(t, base.Data, s, before); err != nil {
					fail(s, err)
				}
			}
			t.Logf("%d writes, %d flushes, %d kill states, %d power-cut states, %d failed", crashsim.Writes(ops), rec.Flushes(), len(kills), len(cuts), failed)
		})
	}
}
