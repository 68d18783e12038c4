package archive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// oneCommitArchive is what `cryptvol archive create a.cva files...` makes:
// the empty first commit, then one commit adding n members (about 22 KB
// for n = 20).
func oneCommitArchive(t *testing.T, n int) (string, map[string][]byte) {
	t.Helper()
	a, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	for i := 0; i < n; i++ {
		nm := fmt.Sprintf("photos/img-%03d.jpg", i)
		want[nm] = content(uint64(i), 1100)
		mustAdd(t, a, nm, want[nm])
	}
	mustCommit(t, a)
	a.Close()
	return path, want
}

func truncateBy(t *testing.T, path string, n int64) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()-n); err != nil {
		t.Fatal(err)
	}
	return st.Size() - n
}

func checkFile(t *testing.T, path string, want map[string][]byte) {
	t.Helper()
	a := reopen(t, nil, path, true)
	defer a.Close()
	checkContents(t, a, want)
	if r, err := a.Verify(t.Context(), nil); err != nil || !r.OK() {
		t.Fatalf("verify after repair: %+v %v", r, err)
	}
}

// A one-commit archive cut short inside its footer: opening it sees only
// the empty first commit, but the index and every record are intact, so
// Check says a repair keeps every member, and Repair does.
func TestRepairKeepsMembersOfACommitCutInItsFooter(t *testing.T) {
	for _, cut := range []int64{1, 30, footerSize - looseFooterLen} {
		t.Run(fmt.Sprint(cut), func(t *testing.T) {
			path, want := oneCommitArchive(t, 20)
			size := truncateBy(t, path, cut)
			a := reopen(t, nil, path, true)
			if a.Len() != 0 || a.Tail() == 0 {
				t.Fatalf("open: %d members, tail %d; the fixture should open as the empty first commit", a.Len(), a.Tail())
			}
			a.Close()
			p, err := Check(t.Context(), path, testKey)
			if err != nil {
				t.Fatal(err)
			}
			if p.Sound || !p.Rebuild || p.Keep != 20 || len(p.Lost) != 0 || len(p.Recovered) != 1 || p.Recovered[0] != 2 || p.KeepBytes != 20*1100 {
				t.Fatalf("plan %+v", p)
			}
			if st, _ := os.Stat(path); st.Size() != size {
				t.Fatal("Check changed the file")
			}
			rep, err := Repair(t.Context(), path, testKey)
			if err != nil || !rep.Rebuilt || rep.Members != 20 {
				t.Fatalf("repair: %+v %v", rep, err)
			}
			checkFile(t, path, want)
		})
	}
}

// The same repair the Windows way (the old file closed before the
// rename), on any system.
func TestRepairByReopening(t *testing.T) {
	defer func(v bool) { replaceByReopening = v }(replaceByReopening)
	replaceByReopening = true
	path, want := oneCommitArchive(t, 20)
	truncateBy(t, path, 1)
	if rep, err := Repair(t.Context(), path, testKey); err != nil || !rep.Rebuilt || rep.Members != 20 {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	checkFile(t, path, want)
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("%d files beside the archive", len(ents)-1)
	}
}

// Cut deeper, the footer (and with it the index's nonce) is gone: nothing
// of the commit can be authenticated. Check says so -- no member kept, the
// bytes a repair removes -- and Repair cuts exactly those.
func TestRepairOfACommitCutBeyondRecovery(t *testing.T) {
	path, _ := oneCommitArchive(t, 20)
	size := truncateBy(t, path, 5000)
	p, err := Check(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	first := int64(headerSize + TagSize + footerSize) // the empty first commit
	if p.Sound || p.Rebuild || p.Keep != 0 || p.Tail != size-first || p.Dropped != size-first || p.TruncateAt != first {
		t.Fatalf("plan %+v", p)
	}
	rep, err := Repair(t.Context(), path, testKey)
	if err != nil || rep.Rebuilt || rep.Truncated != size-first {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	checkFile(t, path, map[string][]byte{})
}

// One damaged record among many: a repair keeps all the others (before,
// it changed nothing and verify kept failing).
func TestRepairDropsOnlyDamagedMembers(t *testing.T) {
	a, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	for i := 0; i < 40; i++ {
		want[name(i)] = content(uint64(i), 500+97*i)
		mustAdd(t, a, name(i), want[name(i)])
		if i%10 == 9 {
			mustCommit(t, a)
		}
	}
	size := damageMember(t, a, path, name(13))

	p, err := Check(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Rebuild || p.Keep != 39 || len(p.Lost) != 1 || p.Lost[0].Name != name(13) || p.LostBytes != size || len(p.Problems) == 0 {
		t.Fatalf("plan %+v", p)
	}
	if _, err := Repair(t.Context(), path, testKey); err != nil {
		t.Fatal(err)
	}
	delete(want, name(13))
	checkFile(t, path, want)
}

// A base index segment damaged in its last chunk: the archive does not
// open, and a repair before salvage rolled back to the empty first commit,
// dropping every member. Now the members named in the chunks that still
// authenticate are kept, and so are those of the later commits.
func TestRepairPartlyDamagedBase(t *testing.T) {
	a, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	long := strings.Repeat("x", 60)
	for i := 0; i < 1500; i++ {
		nm := fmt.Sprintf("d/%s-%04d", long, i)
		want[nm] = []byte(nm[len(nm)-4:])
		mustAdd(t, a, nm, want[nm])
	}
	mustCommit(t, a) // commit 2: a base of about 150 KB, three chunks
	base := a.last
	if !base.isBase() || streamChunks(base.segLen) < 3 {
		t.Fatalf("fixture: segment of %d bytes, base %v", base.segLen, base.isBase())
	}
	for i := 0; i < 2; i++ {
		nm := fmt.Sprintf("later-%d", i)
		want[nm] = []byte(nm)
		mustAdd(t, a, nm, want[nm])
		mustCommit(t, a)
	}
	if a.last.isBase() {
		t.Fatal("fixture: the later commits merged the base")
	}
	a.Close()
	raw, _ := os.ReadFile(path)
	last := base.segOff + 2*(ChunkSize+TagSize) + 10
	raw[last] ^= 1
	os.WriteFile(path, raw, 0o600)
	if _, err := Open(t.Context(), path, testKey, &OpenOptions{ReadOnly: true}); !errors.Is(err, ErrDamaged) {
		t.Fatalf("open: %v", err)
	}

	p, err := Check(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Rebuild || len(p.PartCommits) != 1 || p.PartCommits[0] != 2 || p.Keep < 1000 || p.Keep >= 1502 {
		t.Fatalf("plan: keep %d, part %v, lost %v", p.Keep, p.PartCommits, p.LostCommits)
	}

	// Opened for salvage, the same members can be read.
	s, err := Open(t.Context(), path, testKey, &OpenOptions{ReadOnly: true, Salvage: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Salvaged() == nil || s.Len() != p.Keep {
		t.Fatalf("salvage open: %d members, %+v", s.Len(), s.Salvaged())
	}
	kept := map[string][]byte{}
	for _, e := range s.List() {
		kept[e.Name] = want[e.Name]
	}
	checkContents(t, s, kept)
	if _, err := s.Verify(t.Context(), nil); err == nil {
		t.Fatal("Verify of a salvaged archive")
	}
	if p2, err := s.Check(t.Context()); err != nil || p2.Keep != p.Keep || !p2.Rebuild {
		t.Fatalf("Check of the open archive: %+v %v", p2, err)
	}
	s.Close()

	rep, err := Repair(t.Context(), path, testKey)
	if err != nil || rep.Members != p.Keep {
		t.Fatalf("repair: %+v %v", rep, err)
	}
	if _, ok := kept["later-1"]; !ok {
		t.Fatal("the later commits' members were not kept")
	}
	checkFile(t, path, kept)
}

// Check on a sound archive says so; Repair changes nothing.
func TestCheckSound(t *testing.T) {
	path, want := oneCommitArchive(t, 5)
	before, _ := os.ReadFile(path)
	p, err := Check(t.Context(), path, testKey)
	if err != nil || !p.Sound || p.Rebuild || p.Keep != 5 {
		t.Fatalf("plan %+v %v", p, err)
	}
	if rep, err := Repair(t.Context(), path, testKey); err != nil || rep.Truncated != 0 || rep.Rebuilt {
		t.Fatalf("repair %+v %v", rep, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("repair of a sound archive changed it")
	}
	checkFile(t, path, want)
}

// Compact and Repair keep the archive's mode (Windows has only a
// read-only bit); Compact leaves no temporary file.
func TestCompactKeepsMode(t *testing.T) {
	a, path := newTestArchive(t, nil)
	mustAdd(t, a, "x", []byte("x"))
	mustCommit(t, a)
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Compact(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 && runtime.GOOS != "windows" {
		t.Fatalf("mode after compact %v, want 0640", st.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Fatalf("%d files beside the archive", len(ents)-1)
	}
	truncateBy(t, path, 3)
	if _, err := Repair(t.Context(), path, testKey); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 && runtime.GOOS != "windows" {
		t.Fatalf("mode after repair %v, want 0640", st.Mode())
	}
}

// A damaged segment that a later base superseded loses nothing: Check
// keeps every member and names no lost commit; Repair rewrites the file,
// which then verifies.
func TestRepairSupersededSegment(t *testing.T) {
	a, path := newTestArchive(t, nil)
	want := map[string][]byte{"first": []byte("first")}
	mustAdd(t, a, "first", want["first"])
	mustCommit(t, a)
	old := a.last
	for i := 0; i < 10; i++ {
		want[name(i)] = content(uint64(i), 300)
		mustAdd(t, a, name(i), want[name(i)])
	}
	mustCommit(t, a)
	if !a.last.isBase() {
		t.Fatal("fixture: the second commit is not a base")
	}
	a.Close()
	raw, _ := os.ReadFile(path)
	raw[old.segOff+2] ^= 1
	os.WriteFile(path, raw, 0o600)
	p, err := Check(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Rebuild || p.Keep != 11 || len(p.Lost) != 0 || len(p.LostCommits)+len(p.PartCommits) != 0 || len(p.Problems) == 0 {
		t.Fatalf("plan %+v", p)
	}
	if _, err := Repair(t.Context(), path, testKey); err != nil {
		t.Fatal(err)
	}
	checkFile(t, path, want)
}
