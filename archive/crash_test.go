package archive

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"testing"
)

// crashFixture makes an archive (state A), then appends to it in memory
// with a commit that adds, replaces and removes (state B). It returns the
// file before and after, and both states' contents.
func crashFixture(t *testing.T, bigMember bool, record bool) (before, after []byte, a, b map[string][]byte, log []fileOp) {
	t.Helper()
	ar, path := newTestArchive(t, nil)
	a = map[string][]byte{}
	for i := 0; i < 6; i++ {
		a[name(i)] = content(uint64(i), 200+300*i)
		mustAdd(t, ar, name(i), a[name(i)])
		if i%2 == 1 {
			mustCommit(t, ar) // several runs on the chain
		}
	}
	ar.Close()
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar, mf, err := openMem(bytes.Clone(before), testKey)
	if err != nil {
		t.Fatal(err)
	}
	mf.rec = record
	b = map[string][]byte{}
	for k, v := range a {
		b[k] = v
	}
	b["new-1"] = content(50, 1500)
	b["new-2"] = nil
	if bigMember {
		b["new-big"] = content(51, ChunkSize+3000)
	}
	b[name(1)] = content(52, 700) // replaced
	delete(b, name(2))            // removed
	for _, k := range []string{"new-1", "new-2", "new-big"} {
		if d, ok := b[k]; ok {
			mustAdd(t, ar, k, d)
		}
	}
	if err := ar.Add(name(1), bytes.NewReader(b[name(1)]), fileInfo(), &AddOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if err := ar.Remove(name(2)); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, ar)
	if !bytes.HasPrefix(mf.data, before) {
		t.Fatal("the commit changed bytes that were already in the file")
	}
	return before, bytes.Clone(mf.data), a, b, mf.log
}

// checkState opens data and requires it to hold exactly want, every member
// authenticated.
func checkState(t *testing.T, data []byte, want map[string][]byte, what string) *Archive {
	t.Helper()
	ar, _, err := openMem(data, testKey)
	if err != nil {
		t.Fatalf("%s: open: %v", what, err)
	}
	checkContents(t, ar, want)
	return ar
}

// Cut the file at every offset of the last append: the archive opens with
// exactly the members it had before, and the next commit works.
func TestCrashCutEveryOffset(t *testing.T) {
	before, after, a, b, _ := crashFixture(t, false, false)
	checkState(t, after, b, "complete append")
	t.Logf("append of %d bytes", len(after)-len(before))
	for cut := len(before); cut < len(after); cut++ {
		data := bytes.Clone(after[:cut])
		ar := checkState(t, data, a, "cut")
		if ar.Tail() != int64(cut-len(before)) {
			t.Fatalf("cut at %d: tail %d", cut, ar.Tail())
		}
		if cut%37 == 0 || cut == len(after)-1 {
			// The torn tail is reported by Verify, and cut off by the
			// next commit.
			if r, err := ar.Verify(t.Context(), nil); err != nil || r.OK() || r.Tail == 0 {
				t.Fatalf("cut at %d: verify %+v %v", cut, r, err)
			}
			mustAdd(t, ar, "later", []byte("later"))
			mustCommit(t, ar)
			want := map[string][]byte{"later": []byte("later")}
			for k, v := range a {
				want[k] = v
			}
			mf := ar.f.(*memFile)
			ar2 := checkState(t, mf.data, want, "commit after a cut")
			if r, err := ar2.Verify(t.Context(), nil); err != nil || !r.OK() {
				t.Fatalf("cut at %d, then commit: verify %+v %v", cut, r, err)
			}
		}
	}
}

// The same with an append that holds a multi-chunk record, cutting at a
// stride and around the chunk boundaries.
func TestCrashCutMultiChunk(t *testing.T) {
	before, after, a, b, _ := crashFixture(t, true, false)
	checkState(t, after, b, "complete append")
	cuts := []int{}
	for cut := len(before); cut < len(after); cut += 97 {
		cuts = append(cuts, cut)
	}
	for cut := len(after) - 300; cut < len(after); cut++ {
		cuts = append(cuts, cut)
	}
	for c := len(before); c < len(after); c += ChunkSize + TagSize {
		for d := -20; d <= 20; d++ {
			if c+d >= len(before) && c+d < len(after) {
				cuts = append(cuts, c+d)
			}
		}
	}
	for _, cut := range cuts {
		checkState(t, bytes.Clone(after[:cut]), a, "cut")
	}
}

// Replay the commit's writes and syncs and crash after each of them, with
// the writes not yet synced persisted in any combination of 512-byte
// sectors: the archive opens as before or as after the commit, never
// anything else, and once the commit returned it opens as after.
func TestCrashReplayUnsyncedWrites(t *testing.T) {
	before, _, a, b, log := crashFixture(t, true, true)
	syncs := 0
	for _, o := range log {
		if o.kind == 's' {
			syncs++
		}
	}
	if syncs < 2 {
		t.Fatalf("the commit synced %d times, want 2 (before and after the footer)", syncs)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	sawA, sawB := 0, 0
	for k := 0; k <= len(log); k++ {
		durable := bytes.Clone(before)
		var pending []fileOp
		for _, o := range log[:k] {
			if o.kind == 's' {
				for _, p := range pending {
					durable = applyOp(durable, p)
				}
				pending = nil
				continue
			}
			pending = append(pending, o)
		}
		// Split pending writes into sectors that persist independently.
		var pieces []fileOp
		for _, p := range pending {
			if p.kind != 'w' {
				pieces = append(pieces, p)
				continue
			}
			for s := 0; s < len(p.data); {
				e := min(len(p.data), s+512-int((p.off+int64(s))%512))
				pieces = append(pieces, fileOp{'w', p.off + int64(s), p.data[s:e]})
				s = e
			}
		}
		trials := 30
		if len(pieces) == 0 {
			trials = 1
		}
		for trial := 0; trial < trials; trial++ {
			data := bytes.Clone(durable)
			for i, p := range pieces {
				keep := rng.IntN(2) == 0
				if trial == 1 {
					keep = true // everything persisted
				} else if trial == 2 {
					keep = false
				} else if trial == 3 {
					keep = i >= len(pieces)/2 // the later half only
				}
				if keep {
					data = applyOp(data, p)
				}
			}
			ar, _, err := openMem(data, testKey)
			if err != nil {
				t.Fatalf("crash after op %d/%d (trial %d): open: %v", k, len(log), trial, err)
			}
			switch {
			case sameContents(ar, b):
				sawB++
			case sameContents(ar, a):
				sawA++
				if k == len(log) {
					t.Fatal("the commit returned but a crash loses it")
				}
			default:
				t.Fatalf("crash after op %d/%d (trial %d): neither the old nor the new contents", k, len(log), trial)
			}
		}
	}
	if sawA == 0 || sawB == 0 {
		t.Fatalf("saw old state %d times and new state %d times: the test does not exercise both", sawA, sawB)
	}
	t.Logf("%d logged operations; crash states opened as old %d times, as new %d times", len(log), sawA, sawB)
}

func applyOp(data []byte, o fileOp) []byte {
	if o.kind == 't' {
		return applyTruncate(data, o.off)
	}
	return applyWrite(data, o.off, o.data)
}

// sameContents reports whether ar holds exactly want, all authentic.
func sameContents(ar *Archive, want map[string][]byte) bool {
	list := ar.List()
	if len(list) != len(want) {
		return false
	}
	for _, e := range list {
		w, ok := want[e.Name]
		if !ok {
			return false
		}
		got, err := ar.ReadFile(e.Name)
		if err != nil || !bytes.Equal(got, w) {
			return false
		}
	}
	return true
}

// A commit whose write fails leaves the archive unusable in memory, and the
// file opens as before.
func TestCommitWriteFailure(t *testing.T) {
	before, _, a, _, log := crashFixture(t, false, true)
	writes := 0
	for _, o := range log {
		if o.kind != 's' {
			writes++
		}
	}
	for fail := 0; fail < writes; fail++ {
		ar, _, err := openMem(bytes.Clone(before), testKey)
		if err != nil {
			t.Fatal(err)
		}
		ff := &failingFile{memFile: ar.f.(*memFile), failAt: fail}
		ar.f = ff
		mustAdd(t, ar, "x", content(1, 3000))
		if err := ar.Remove(name(0)); err != nil {
			t.Fatal(err)
		}
		err = ar.Commit()
		if ff.n <= fail {
			continue // fewer writes than the fixture's commit
		}
		if err == nil {
			t.Fatalf("write %d failed but Commit succeeded", fail)
		}
		if _, err := ar.ReadFile(name(1)); !errors.Is(err, ErrClosed) {
			t.Fatalf("archive usable after a failed commit: %v", err)
		}
		checkState(t, ff.memFile.data, a, "after a failed commit")
	}
}

type failingFile struct {
	*memFile
	failAt, n int
}

var errInjected = errors.New("injected write failure")

func (f *failingFile) WriteAt(p []byte, off int64) (int, error) {
	f.n++
	if f.n-1 == f.failAt {
		return 0, errInjected
	}
	return f.memFile.WriteAt(p, off)
}

func (f *failingFile) Truncate(n int64) error {
	f.n++
	if f.n-1 == f.failAt {
		return errInjected
	}
	return f.memFile.Truncate(n)
}

// Repair cuts a torn tail off, and rolls back past a newest commit whose
// index segment is damaged (Open refuses that one: it is damage, not an
// interrupted append).
func TestRepair(t *testing.T) {
	a, path := newTestArchive(t, nil)
	mustAdd(t, a, "one", []byte("1"))
	mustCommit(t, a)
	good, _ := os.ReadFile(path)
	mustAdd(t, a, "two", []byte("2"))
	mustCommit(t, a)
	segOff := a.last.segOff
	a.Close()

	// A torn tail.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte("half an append"))
	f.Close()
	rep, err := Repair(t.Context(), path, testKey)
	if err != nil || rep.Truncated != 14 || rep.KeptCommit != 3 || rep.FromCommit != 3 || rep.Members != 2 {
		t.Fatalf("repair of a torn tail: %+v %v", rep, err)
	}

	// The newest segment damaged: Open fails, Repair rolls back.
	raw, _ := os.ReadFile(path)
	raw[segOff+3] ^= 1
	os.WriteFile(path, raw, 0o600)
	if _, err := Open(t.Context(), path, testKey, nil); !errors.Is(err, ErrDamaged) {
		t.Fatalf("open with a damaged newest index: %v", err)
	}
	rep, err = Repair(t.Context(), path, testKey)
	if err != nil || rep.KeptCommit != 2 || rep.FromCommit != 3 || rep.Members != 1 {
		t.Fatalf("repair of a damaged index: %+v %v", rep, err)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, good) {
		t.Fatal("repair did not restore the earlier commit byte for byte")
	}
	a = reopen(t, nil, path, true)
	checkContents(t, a, map[string][]byte{"one": []byte("1")})
	if r, err := a.Verify(t.Context(), nil); err != nil || !r.OK() {
		t.Fatalf("verify after repair: %+v %v", r, err)
	}
	a.Close()
}
