package archive

// archive add through the power-cut explorer (internal/crashsim, issue 31
// item 2): the commit's writes and syncs become a crashsim log, and every
// state it builds (each flush epoch, its prefixes, sampled reorderings,
// torn writes) must open as before the commit or as after it, never
// anything else, and as after once the commit has returned.

import (
	"bytes"
	"os"
	"testing"

	"github.com/cryptvol/cryptvol/internal/crashsim"
)

// growBuf is a WriterAt over a byte slice that grows (with zeros) like a
// file written past its end.
type growBuf struct{ b []byte }

func (g *growBuf) WriteAt(p []byte, off int64) (int, error) {
	g.b = applyWrite(g.b, off, p)
	return len(p), nil
}

func TestCrashExplorerArchiveAdd(t *testing.T) {
	before, after, a, b, log := crashFixture(t, true, true)
	var ops []crashsim.Op
	for _, o := range log {
		switch o.kind {
		case 'w':
			ops = append(ops, crashsim.Op{Off: o.off, Data: o.data})
		case 's':
			ops = append(ops, crashsim.Op{Flush: true})
		default:
			t.Fatalf("the commit logged a %q: the explorer models writes and flushes only", o.kind)
		}
	}
	o := crashsim.Options{Subsets: 40, Torn: 8, Seed: 31, Distinct: true}
	if os.Getenv("CRYPTVOL_CRASH_LONG") != "" {
		o = crashsim.Options{Subsets: 2000, Torn: 2000, Seed: 31, Distinct: true}
	}
	states := crashsim.States(ops, o)
	var tally struct{ notOpen, halfDone, lostCommit, asBefore, asAfter int }
	for i, s := range states {
		g := &growBuf{b: bytes.Clone(before)}
		if err := s.Apply(g); err != nil {
			t.Fatal(err)
		}
		ar, _, err := openMem(g.b, testKey)
		switch {
		case err != nil:
			tally.notOpen++
			if tally.notOpen <= 3 {
				t.Errorf("%s: the archive does not open: %v", s.Name, err)
			}
		case sameContents(ar, b):
			tally.asAfter++
		case sameContents(ar, a):
			tally.asBefore++
			if i == len(states)-1 {
				tally.lostCommit++
				t.Errorf("%s: the whole log (the commit returned) opens as before the commit", s.Name)
			}
		default:
			tally.halfDone++
			if tally.halfDone <= 3 {
				t.Errorf("%s: neither the members before the commit nor after: the commit is half done", s.Name)
			}
		}
		if ar != nil {
			ar.Close()
		}
	}
	whole := &growBuf{b: bytes.Clone(before)}
	states[len(states)-1].Apply(whole)
	if !bytes.Equal(whole.b, after) {
		t.Fatal("the whole log replayed is not the file the commit left")
	}
	if tally.asBefore == 0 || tally.asAfter == 0 {
		t.Fatalf("%d states open as before, %d as after: the exploration does not reach both", tally.asBefore, tally.asAfter)
	}
	t.Logf("archive add: %d writes, %d flushes: %d crash states tried, %d do not open, 0 lost a pre-existing file (every state opens with all members or the commit's), %d atomic op half done, %d lost the returned commit; %d as before, %d as after",
		crashsim.Writes(ops), len(ops)-crashsim.Writes(ops), len(states), tally.notOpen, tally.halfDone, tally.lostCommit, tally.asBefore, tally.asAfter)
}
