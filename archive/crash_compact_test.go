package archive

// archive compact through the power-cut explorer (issue 31, item 2).
// Compact writes a new file beside the archive, syncs it and renames it
// over the archive, then syncs the directory (internal/atomicfile). The
// log holds the new file's writes and syncs and the rename as one more
// write (to a mark past any file offset), then the directory's sync: a
// crash state is the old file where the rename did not persist, else the
// new file as far as its writes persisted. One flush for both files is
// exact here: every write of the new file comes before its sync, and the
// rename after it, so what a flush orders is what that file's fsync or
// the directory's orders. Every state must open with every member, byte
// for byte, in the old layout or the new, and the whole log (Compact
// returned) in the new.

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
)

// renameMark is the offset the rename is logged at.
const renameMark = 1 << 60

func TestCrashExplorerArchiveCompact(t *testing.T) {
	old, after, live, ops := compactFixture(t)
	if len(ops) == 0 || !ops[len(ops)-1].Flush {
		t.Fatal("compact's last step (the rename) is not followed by a flush: its return is not durable")
	}
	o := crashsim.Options{Subsets: 40, Torn: 8, Seed: 31, Distinct: true}
	if os.Getenv("CRYPTVOL_CRASH_LONG") != "" {
		o = crashsim.Options{Subsets: 4000, Torn: 4000, Seed: 31, Distinct: true}
	}
	tally := exploreCompact(t, old, after, live, ops, o)
	t.Logf("archive compact: %d writes, %d flushes: %d crash states tried, %d do not open, %d lost a member, %d atomic op half done, %d lost the returned compact; %d in the old layout, %d in the new",
		crashsim.Writes(ops)-1, len(ops)-crashsim.Writes(ops), tally.states, tally.notOpen, tally.lost, tally.halfDone, tally.lostDone, tally.asOld, tally.asNew)
	if tally.notOpen+tally.lost+tally.halfDone+tally.lostDone > 0 {
		t.Errorf("archive compact: %d states fail; first: %q", tally.notOpen+tally.lost+tally.halfDone+tally.lostDone, tally.first)
	}
	if tally.asOld == 0 || tally.asNew == 0 {
		t.Fatalf("%d states in the old layout, %d in the new: the exploration does not reach both", tally.asOld, tally.asNew)
	}
}

// TestCrashExplorerCompactCatchesMissingSync drops the syncs of the new
// file from compact's log, as if it were renamed over the archive
// unsynced, and shows that the explorer then finds members lost.
func TestCrashExplorerCompactCatchesMissingSync(t *testing.T) {
	old, after, live, ops := compactFixture(t)
	var unsynced []crashsim.Op
	renamed := false
	for _, o := range ops {
		if o.Off == renameMark {
			renamed = true
		}
		if o.Flush && !renamed {
			continue
		}
		unsynced = append(unsynced, o)
	}
	tally := exploreCompact(t, old, after, live, unsynced, crashsim.Options{Subsets: 40, Torn: 8, Seed: 31, Distinct: true})
	t.Logf("compact without its file syncs: %d crash states, %d do not open, %d lost a member, %d half done", tally.states, tally.notOpen, tally.lost, tally.halfDone)
	if tally.notOpen+tally.lost+tally.halfDone == 0 {
		t.Fatal("the explorer found nothing wrong with a compact that renames an unsynced file over the archive")
	}
}

// compactFixture makes an archive whose compaction changes its layout
// (members removed and replaced over several commits), compacts it with
// the steps logged, and returns the file before and after, its members
// and the log.
func compactFixture(t *testing.T) (old, after []byte, live map[string][]byte, ops []crashsim.Op) {
	t.Helper()
	ar, path := newTestArchive(t, &CreateOptions{})
	live = map[string][]byte{}
	for i := 0; i < 8; i++ {
		live[name(i)] = content(uint64(i), 300+700*i)
		mustAdd(t, ar, name(i), live[name(i)])
		if i%3 == 2 {
			mustCommit(t, ar)
		}
	}
	mustCommit(t, ar)
	if err := ar.Remove(name(2)); err != nil {
		t.Fatal(err)
	}
	delete(live, name(2))
	live[name(5)] = content(55, ChunkSize+1000)
	if err := ar.Add(name(5), bytes.NewReader(live[name(5)]), fileInfo(), &AddOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, ar)
	ar.Close()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar, err = Open(context.Background(), path, testKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	compactTrace = func(kind byte, off int64, data []byte) {
		switch kind {
		case 'w':
			ops = append(ops, crashsim.Op{Off: off, Data: data})
		case 's', 'd':
			ops = append(ops, crashsim.Op{Flush: true})
		case 'r':
			ops = append(ops, crashsim.Op{Off: renameMark, Data: []byte{1}})
		default:
			t.Errorf("compact logged a %q: the explorer models writes, syncs and the rename only", kind)
		}
	}
	_, err = ar.Compact(context.Background(), nil)
	compactTrace = nil
	if err != nil {
		t.Fatal(err)
	}
	ar.Close()
	if after, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(old, after) {
		t.Fatal("compact left the file as it was")
	}
	return old, after, live, ops
}

type compactTally struct {
	states, notOpen, lost, halfDone, lostDone, asOld, asNew int
	first                                                   []string
}

func exploreCompact(t *testing.T, old, after []byte, live map[string][]byte, ops []crashsim.Op, o crashsim.Options) compactTally {
	var tally compactTally
	states := crashsim.States(ops, o)
	fail := func(name, why string) {
		if len(tally.first) < 3 {
			tally.first = append(tally.first, name+": "+why)
		}
	}
	for i, s := range states {
		tally.states++
		nf := &growBuf{}
		renamed := false
		for _, w := range s.Writes {
			if w.Off == renameMark {
				renamed = true
				continue
			}
			nf.WriteAt(w.Data, w.Off)
		}
		data := old
		if renamed {
			data = nf.b
		}
		ar, _, err := openMem(bytes.Clone(data), testKey)
		switch {
		case err != nil:
			tally.notOpen++
			fail(s.Name, "does not open: "+err.Error())
		case !sameContents(ar, live):
			tally.lost++
			fail(s.Name, "a member is lost or changed")
		case bytes.Equal(data, old):
			tally.asOld++
			if i == len(states)-1 {
				tally.lostDone++
				fail(s.Name, "the whole log (compact returned) is the old file")
			}
		case bytes.Equal(data, after):
			tally.asNew++
		default:
			tally.halfDone++
			fail(s.Name, "every member there, in neither the old file nor the new")
		}
		if ar != nil {
			ar.Close()
		}
	}
	return tally
}
