package archive

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCommitListAndBytesText(t *testing.T) {
	for want, gens := range map[string][]uint64{"3": {3}, "2, 5-7": {7, 2, 5, 6}, "1-2, 4, 9-10": {10, 9, 4, 2, 1}, "": nil} {
		if got := commitList(gens); got != want {
			t.Errorf("commitList(%v) = %q, want %q", gens, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 bytes", 10239: "10239 bytes", 10240: "10.0 KiB (10240 bytes)", 3 << 20: "3.0 MiB (3145728 bytes)"} {
		if got := BytesText(n); got != want {
			t.Errorf("BytesText(%d) = %q, want %q", n, got, want)
		}
	}
	if members(1) != "1 member" || members(0) != "0 members" {
		t.Error(members(1), members(0))
	}
}

func TestSalvagedString(t *testing.T) {
	s := &Salvaged{LostCommits: []uint64{3}, PartCommits: []uint64{5, 4}, Recovered: []uint64{6}}
	if got, want := s.String(), "unreadable index of commit 3; index of commit 4-5 partly unreadable; footer of commit 6 cut short or damaged"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := (&Salvaged{}).String(); got != "a footer on its chain is damaged" {
		t.Error(got)
	}
}

// The tail of a real archive, as the commands describe it: torn bytes,
// and a commit whose footer is cut short.
func TestTailReportText(t *testing.T) {
	path, _ := oneCommitArchive(t, 3)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(make([]byte, 12))
	f.Close()
	a := reopen(t, nil, path, true)
	tr, err := a.TailReport(t.Context())
	a.Close()
	if err != nil || tr.Bytes != 12 || tr.Commit != 0 {
		t.Fatalf("%+v %v", tr, err)
	}
	const torn = "a.cva ends with 12 bytes that are not a complete commit: an append that did not finish, or what is left of a commit cut short (its members are then lost: nothing in these bytes can be authenticated); using commit 2, the last complete one; "
	if got := tr.Text("a.cva", 2, false); got != torn+"'archive verify --repair' removes them" {
		t.Errorf("read: %q", got)
	}
	if got := tr.Text("a.cva", 2, true); got != torn+"this change removes them" {
		t.Errorf("change: %q", got)
	}

	path, _ = oneCommitArchive(t, 3)
	truncateBy(t, path, 5)
	a = reopen(t, nil, path, true)
	tr, err = a.TailReport(t.Context())
	a.Close()
	if err != nil || tr.Commit != 2 || tr.Puts != 3 {
		t.Fatalf("%+v %v", tr, err)
	}
	const cut = "a.cva ends with commit 2 cut short: its footer does not authenticate, but its index does (3 members added or replaced, 0 removed); 'archive verify --repair' recovers it"
	if got := tr.Text("a.cva", 1, false); got != cut+"; reading commit 1, the last complete one" {
		t.Errorf("read: %q", got)
	}
	if got := tr.Text("a.cva", 1, true); got != cut+", and a change now would cut it off: repair first" {
		t.Errorf("change: %q", got)
	}
}

// Verify's report of a sound archive and of one with a torn tail.
func TestReportWriteText(t *testing.T) {
	path, _ := oneCommitArchive(t, 20)
	a := reopen(t, nil, path, true)
	r, err := a.Verify(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	r.WriteText(&b, "a.cva", a)
	a.Close()
	if want := "a.cva: aes-256-gcm, key-file; 20 members; 2 commits; 20 records (20 live) and 2 index segments authenticated; "; !strings.HasPrefix(b.String(), want) || !strings.HasSuffix(b.String(), " KiB\nOK\n") {
		t.Fatalf("sound:\n%s", b.String())
	}

	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(make([]byte, 100))
	f.Close()
	a = reopen(t, nil, path, true)
	defer a.Close()
	r, err = a.Verify(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	r.WriteText(&b, "a.cva", a)
	if !strings.HasSuffix(b.String(), " KiB\nDAMAGED: 100 bytes after the last complete commit (commit 2)\n") {
		t.Fatalf("torn tail:\n%s", b.String())
	}
}

// What a repair would do and did, for a real archive with one damaged
// record among 40 (rebuilt) and for one with a torn tail (cut).
func TestRepairTexts(t *testing.T) {
	a, path := newTestArchive(t, nil)
	for i := 0; i < 40; i++ {
		mustAdd(t, a, name(i), content(uint64(i), 1000))
		if i%10 == 9 {
			mustCommit(t, a)
		}
	}
	damageMember(t, a, path, name(13))

	p, err := Check(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p.WriteText(&b, false)
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"A repair would keep 39 members (38.1 KiB of contents), each authenticated.",
		"It would remove 1 member (1000 B) whose records do not authenticate:",
		"  " + name(13) + " (1000 B): ",
		"It would write the kept members into a new file that takes the archive's place, as compact does (",
	}
	for i, w := range want {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Fatalf("line %d: want %q in:\n%s", i+1, w, b.String())
		}
	}
	rep, err := Repair(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	rep.WriteText(&b)
	if !strings.HasPrefix(b.String(), "A repair kept 39 members (38.1 KiB of contents), each authenticated.\nIt removed 1 member (1000 B)") ||
		!strings.Contains(b.String(), "\nIt wrote the kept members into a new file") {
		t.Fatalf("after the repair:\n%s", b.String())
	}

	b.Reset()
	rep, err = Repair(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteText(&b)
	if b.String() != "Nothing to repair: the archive ends with a complete commit.\n" {
		t.Fatalf("sound: %q", b.String())
	}

	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(make([]byte, 30))
	f.Close()
	b.Reset()
	p, _ = Check(t.Context(), path, testKey)
	p.WriteText(&b, false)
	if !strings.HasSuffix(b.String(), ", removing the last 30 bytes: nothing in them authenticates (an append that did not finish, or what is left of a commit cut short).\n") ||
		!strings.Contains(b.String(), "\nIt would cut the file at ") {
		t.Fatalf("torn tail plan:\n%s", b.String())
	}
	b.Reset()
	rep, err = Repair(t.Context(), path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	rep.WriteText(&b)
	if want := "Removed 30 bytes after commit 1 (an interrupted append, or the end of a commit cut short: nothing in them authenticated); 39 members.\n"; b.String() != want {
		t.Fatalf("got  %q\nwant %q", b.String(), want)
	}
}

func TestEntryLongText(t *testing.T) {
	e := Entry{Name: "d/x", Size: 1234, Mode: 0o640, ModTime: testTime}
	want := "-rw-r----- " + "        1234 " + testTime.Local().Format(time.DateTime) + " d/x"
	if got := e.LongText(); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestReadKeyFile(t *testing.T) {
	dir := t.TempDir()
	for n, ok := range map[int]bool{31: false, 32: true, 1 << 20: true, 1<<20 + 1: false} {
		p := filepath.Join(dir, "key")
		os.WriteFile(p, content(uint64(n), n), 0o600)
		b, err := ReadKeyFile(p)
		var se *KeyFileSizeError
		switch {
		case ok && (err != nil || !bytes.Equal(b, content(uint64(n), n))):
			t.Errorf("%d bytes: %v", n, err)
		case !ok && (!errors.As(err, &se) || se.Size != n || se.Path != p):
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	_, err := ReadKeyFile(filepath.Join(dir, "none"))
	if !errors.Is(err, ErrNotExist) || !strings.HasPrefix(err.Error(), "key file: open ") {
		t.Errorf("missing: %v", err)
	}
	if err := (&KeyFileSizeError{Path: "k", Size: 3}).Error(); err != "key file k: want 32 bytes to 1 MiB of random data, not 3 bytes" {
		t.Error(err)
	}
}
