package archive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"
)

func TestRoundTripSmallAndEdgeSizes(t *testing.T) {
	for _, c := range []Cipher{AES256GCM, XChaCha20Poly1305} {
		t.Run(c.String(), func(t *testing.T) {
			a, path := newTestArchive(t, &CreateOptions{Cipher: c, NoSync: true})
			want := map[string][]byte{}
			sizes := []int{0, 1, 15, 16, 17, 4095, 4096, ChunkSize - 1, ChunkSize, ChunkSize + 1, 2 * ChunkSize, 2*ChunkSize + 3}
			for i, n := range sizes {
				nm := name(i)
				want[nm] = content(uint64(i), n)
				mustAdd(t, a, nm, want[nm])
			}
			// Nothing is visible before the commit.
			if a.Len() != 0 {
				t.Fatalf("Len before commit = %d", a.Len())
			}
			if _, err := a.ReadFile(name(0)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("uncommitted member readable: %v", err)
			}
			mustCommit(t, a)
			checkContents(t, a, want)
			a = reopen(t, a, path, true)
			checkContents(t, a, want)
			e, err := a.Stat(name(3))
			if err != nil || !e.ModTime.Equal(testTime) || e.Mode != 0o640 || e.IsDir() {
				t.Fatalf("Stat = %+v, %v; want mtime %v mode 0640", e, err, testTime)
			}
			a.Close()
		})
	}
}

func TestUnicodeNamesAndDirectories(t *testing.T) {
	a, path := newTestArchive(t, nil)
	names := []string{
		"Übung.txt", "日本語/ファイル名.jpg", "emoji/🙂🙃.png", "combining/e\u0301", "nfc/é",
		"spaces in name/ and  more .txt", "deep/a/b/c/d/e/f/g/h/i/j/k.bin", "back\\slash", "-dash", ".hidden",
	}
	want := map[string][]byte{}
	for i, n := range names {
		want[n] = content(uint64(i+100), 10*i)
		mustAdd(t, a, n, want[n])
	}
	dirTime := time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)
	for _, d := range []string{"日本語", "empty dir", "deep/a"} {
		if err := a.Add(d, nil, Info{ModTime: dirTime, Mode: fs.ModeDir | 0o750}, nil); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, a)
	a = reopen(t, a, path, true)
	defer a.Close()
	for n, d := range want {
		got, err := a.ReadFile(n)
		if err != nil || !bytes.Equal(got, d) {
			t.Fatalf("%q: %v", n, err)
		}
	}
	// NFC and NFD spellings are different names.
	if _, err := a.Stat("combining/é"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("NFC lookup of an NFD name: %v", err)
	}
	e, err := a.Stat("empty dir")
	if err != nil || !e.IsDir() || e.Mode != fs.ModeDir|0o750 || !e.ModTime.Equal(dirTime) {
		t.Fatalf("directory: %+v %v", e, err)
	}
	if _, err := a.ReadFile("empty dir"); err == nil {
		t.Fatal("ReadFile of a directory succeeded")
	}
	if len(a.List()) != len(names)+3 {
		t.Fatalf("List has %d entries", len(a.List()))
	}
}

func TestInvalidNames(t *testing.T) {
	a, _ := newTestArchive(t, nil)
	defer a.Close()
	for _, n := range []string{"", ".", "..", "/abs", "a/", "a//b", "a/./b", "a/../b", "../x", "nul\x00", "\xff\xfe", string(make([]byte, MaxNameLen+1))} {
		if err := a.Add(n, bytes.NewReader(nil), fileInfo(), nil); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Add(%q) = %v, want ErrInvalidName", n, err)
		}
	}
}

func TestExistsReplaceRemove(t *testing.T) {
	a, path := newTestArchive(t, nil)
	mustAdd(t, a, "x", []byte("one"))
	if err := a.Add("x", bytes.NewReader(nil), fileInfo(), nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second Add in a batch: %v", err)
	}
	mustCommit(t, a)
	if err := a.Add("x", bytes.NewReader([]byte("two")), fileInfo(), nil); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Add over a committed member: %v", err)
	}
	if err := a.Add("x", bytes.NewReader([]byte("two")), fileInfo(), &AddOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	if err := a.Remove("x"); err == nil {
		t.Fatal("Remove of a member replaced in the same batch succeeded")
	}
	mustCommit(t, a)
	if err := a.Remove("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove of a missing member: %v", err)
	}
	if err := a.Remove("x"); err != nil {
		t.Fatal(err)
	}
	// Removed then added again in one batch: a replacement.
	if err := a.Add("x", bytes.NewReader([]byte("three")), fileInfo(), nil); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a)
	a = reopen(t, a, path, false)
	checkContents(t, a, map[string][]byte{"x": []byte("three")})
	r, err := a.Verify(t.Context(), nil)
	if err != nil || !r.OK() || r.Records != 3 || r.LiveRecords != 1 {
		t.Fatalf("verify: %v %+v", err, r)
	}
	a.Close()
}

// A reader that fails half-way leaves nothing behind: the batch goes on,
// and the next record takes the failed one's place.
func TestAddReaderFailure(t *testing.T) {
	a, path := newTestArchive(t, nil)
	mustAdd(t, a, "before", content(1, 5000))
	boom := errors.New("boom")
	r := io.MultiReader(bytes.NewReader(content(2, 3*ChunkSize)), iotestErrReader{boom})
	if err := a.Add("failing", r, fileInfo(), nil); !errors.Is(err, boom) {
		t.Fatalf("Add = %v, want the reader's error", err)
	}
	mustAdd(t, a, "after", content(3, 100))
	mustCommit(t, a)
	want := map[string][]byte{"before": content(1, 5000), "after": content(3, 100)}
	a = reopen(t, a, path, false)
	checkContents(t, a, want)
	if a.Tail() != 0 {
		t.Fatalf("leftover bytes after the commit: tail %d", a.Tail())
	}
	rep, err := a.Verify(t.Context(), nil)
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	a.Close()
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestRollbackAndCloseDiscard(t *testing.T) {
	a, path := newTestArchive(t, nil)
	mustAdd(t, a, "kept", []byte("k"))
	mustCommit(t, a)
	size := fileSize(t, path)
	mustAdd(t, a, "dropped", content(1, 10000))
	if err := a.Rollback(); err != nil {
		t.Fatal(err)
	}
	if fileSize(t, path) != size {
		t.Fatal("Rollback left bytes behind")
	}
	mustAdd(t, a, "dropped", content(1, 10000))
	a = reopen(t, a, path, false) // Close discards
	checkContents(t, a, map[string][]byte{"kept": []byte("k")})
	if fileSize(t, path) != size {
		t.Fatal("Close left bytes behind")
	}
	a.Close()
}

func fileSize(t testing.TB, path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// The Member reader: random seeks in a multi-chunk member.
func TestMemberSeek(t *testing.T) {
	a, path := newTestArchive(t, nil)
	data := content(7, 5*ChunkSize+1234)
	mustAdd(t, a, "big", data)
	mustCommit(t, a)
	a = reopen(t, a, path, true)
	defer a.Close()
	m, err := a.Open("big")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Stat().Size != int64(len(data)) {
		t.Fatal("Stat size")
	}
	var rs io.ReadSeeker = m
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 3*ChunkSize)
	for i := 0; i < 200; i++ {
		off := rng.Int64N(int64(len(data)) + 10)
		n := rng.IntN(len(buf))
		if _, err := rs.Seek(off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadFull(rs, buf[:n])
		wantN := min(n, max(0, len(data)-int(off)))
		if got != wantN || (err != nil && got == n) {
			t.Fatalf("read %d at %d: got %d, %v", n, off, got, err)
		}
		if !bytes.Equal(buf[:got], data[min(off, int64(len(data))):][:got]) {
			t.Fatalf("read %d at %d: wrong bytes", n, off)
		}
	}
	if p, _ := rs.Seek(-10, io.SeekEnd); p != int64(len(data))-10 {
		t.Fatal("SeekEnd")
	}
	if p, _ := rs.Seek(5, io.SeekCurrent); p != int64(len(data))-5 {
		t.Fatal("SeekCurrent")
	}
	if _, err := rs.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("negative seek accepted")
	}
}

// hashReader yields n deterministic bytes without holding them.
type hashReader struct {
	r *rand.ChaCha8
	n int64
}

func (h *hashReader) Read(p []byte) (int, error) {
	if h.n == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	h.r.Read(p)
	h.n -= int64(len(p))
	return len(p), nil
}

// A 100 MB member goes in and comes out streamed, in constant memory.
func TestLargeMemberStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB member: not in -short")
	}
	const size = 100 << 20
	a, path := newTestArchive(t, nil)
	seed := [32]byte{9}
	wantSum := sha256.New()
	io.Copy(wantSum, &hashReader{rand.NewChaCha8(seed), size})

	heap := heapInUse()
	if err := a.Add("large.bin", &hashReader{rand.NewChaCha8(seed), size}, fileInfo(), nil); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a)
	if grew := heapInUse() - heap; grew > 8<<20 {
		t.Errorf("adding 100 MB grew the heap by %d bytes", grew)
	}
	a = reopen(t, a, path, true)
	defer a.Close()
	m, err := a.Open("large.bin")
	if err != nil {
		t.Fatal(err)
	}
	heap = heapInUse()
	gotSum := sha256.New()
	n, err := io.Copy(gotSum, m)
	if err != nil || n != size {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	if grew := heapInUse() - heap; grew > 8<<20 {
		t.Errorf("reading 100 MB grew the heap by %d bytes", grew)
	}
	m.Close()
	if !bytes.Equal(gotSum.Sum(nil), wantSum.Sum(nil)) {
		t.Fatal("100 MB member: contents differ")
	}
}

func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// 100,000 members in one commit, then one more in a second commit; all
// come back after reopening.
func TestHundredThousandEntries(t *testing.T) {
	const n = 100_000
	a, path := newTestArchive(t, nil)
	for i := 0; i < n; i++ {
		if err := a.Add(name(i), bytes.NewReader(smallContent(i)), fileInfo(), nil); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, a)
	mustAdd(t, a, "one more", []byte("x"))
	mustCommit(t, a)
	a = reopen(t, a, path, true)
	defer a.Close()
	if a.Len() != n+1 {
		t.Fatalf("Len = %d", a.Len())
	}
	list := a.List()
	for i := 0; i < n; i++ {
		if list[i].Name != name(i) || list[i].Size != int64(len(smallContent(i))) {
			t.Fatalf("entry %d = %+v", i, list[i])
		}
	}
	for i := 0; i < n; i++ {
		got, err := a.ReadFile(name(i))
		if err != nil || !bytes.Equal(got, smallContent(i)) {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	t.Logf("100k members: index holds %d bytes in memory (%.1f per member), file %d bytes",
		a.IndexMemory(), float64(a.IndexMemory())/n, fileSize(t, path))
}

// smallContent is cheap distinct contents for bulk tests.
func smallContent(i int) []byte {
	return []byte(name(i) + "#" + string(rune('a'+i%26)))
}

// Walk yields every member once, in file order, with its contents.
func TestWalk(t *testing.T) {
	a, path := newTestArchive(t, nil)
	want := map[string][]byte{}
	sizes := []int{0, 5, 3000, ChunkSize, 2*ChunkSize + 5, walkWindow + 7, 40}
	for i := 0; i < 300; i++ { // enough small records to be shared out
		sizes = append(sizes, 3000+i*37)
	}
	for i, n := range sizes {
		want[name(i)] = content(uint64(i), n)
		mustAdd(t, a, name(i), want[name(i)])
		if i == 3 {
			mustCommit(t, a)
		}
	}
	if err := a.Add("d", nil, Info{Mode: fs.ModeDir | 0o755}, nil); err != nil {
		t.Fatal(err)
	}
	mustCommit(t, a)
	if err := a.Add(name(1), bytes.NewReader([]byte("replaced")), fileInfo(), &AddOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	want[name(1)] = []byte("replaced")
	mustCommit(t, a)
	a.Close()
	for _, threads := range []int{1, 2, 4} {
		testWalk(t, path, threads, want)
	}
}

func testWalk(t *testing.T, path string, threads int, want map[string][]byte) {
	a, err := Open(t.Context(), path, testKey, &OpenOptions{ReadOnly: true, Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	seen := map[string]bool{}
	err = a.Walk(func(e Entry, data []byte) error {
		if seen[e.Name] {
			t.Fatalf("%s twice", e.Name)
		}
		seen[e.Name] = true
		if e.Name == "d" {
			if !e.IsDir() || data != nil {
				t.Fatal("directory")
			}
			return nil
		}
		if !bytes.Equal(data, want[e.Name]) || e.Size != int64(len(data)) {
			t.Fatalf("%s: %d bytes, want %d", e.Name, len(data), len(want[e.Name]))
		}
		return nil
	})
	if err != nil || len(seen) != len(want)+1 {
		t.Fatalf("walk: %v, %d members", err, len(seen))
	}
	stop := errors.New("stop")
	if err := a.Walk(func(Entry, []byte) error { return stop }); err != stop {
		t.Fatalf("fn's error: %v", err)
	}
}

// A million members: added in one commit, opened again, looked up; the
// index stays compact (reported) and nothing scales worse than linearly.
func TestMillionEntries(t *testing.T) {
	if testing.Short() {
		t.Skip("a million members: not in -short")
	}
	const n = 1_000_000
	a, path := newTestArchive(t, nil)
	for i := 0; i < n; i++ {
		if err := a.Add(name(i), bytes.NewReader(smallContent(i)), fileInfo(), nil); err != nil {
			t.Fatal(err)
		}
	}
	mustCommit(t, a)
	a.Close()
	before := heapInUse()
	t0 := time.Now()
	a = reopen(t, nil, path, false)
	opened := time.Since(t0)
	defer a.Close()
	held := heapInUse() - before
	if a.Len() != n {
		t.Fatalf("Len = %d", a.Len())
	}
	for i := 0; i < n; i += 997 {
		got, err := a.ReadFile(name(i))
		if err != nil || !bytes.Equal(got, smallContent(i)) {
			t.Fatalf("member %d: %v", i, err)
		}
	}
	mustAdd(t, a, "one more", []byte("x"))
	mustCommit(t, a)
	if got, err := a.ReadFile("one more"); err != nil || string(got) != "x" {
		t.Fatal(err)
	}
	// 64-byte records, the names (about 30 bytes here) and the table.
	if per := float64(held) / n; per > 160 {
		t.Errorf("the index holds %.0f bytes per member", per)
	}
	t.Logf("1e6 members: open %v, heap held %d bytes (%.0f per member; index %d), file %d bytes",
		opened, held, float64(held)/n, a.IndexMemory(), fileSize(t, path))
}

// Readers in other goroutines see every committed member while a writer
// appends and commits (run with -race).
func TestConcurrentReaders(t *testing.T) {
	a, _ := newTestArchive(t, nil)
	defer a.Close()
	mustAdd(t, a, name(0), content(0, 500))
	mustCommit(t, a)
	done := make(chan struct{})
	errs := make(chan error, 2)
	for g := 0; g < 2; g++ {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				for _, e := range a.List() {
					// (A member listed may be removed before it is read.)
					if _, err := a.ReadFile(e.Name); err != nil && !errors.Is(err, fs.ErrNotExist) {
						errs <- err
						return
					}
				}
				if err := a.Walk(func(Entry, []byte) error { return nil }); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i < 200; i++ {
		mustAdd(t, a, name(i), content(uint64(i), 300+i))
		if i%3 == 0 {
			if err := a.Remove(name(i - 2)); err != nil {
				t.Fatal(err)
			}
		}
		mustCommit(t, a)
	}
	stopReaders := func() {
		close(done)
		for g := 0; g < 2; g++ {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
	if replaceByReopening {
		// Windows: Compact closes the old file under readers still
		// using it (replace.go), so there they finish first.
		stopReaders()
	}
	if _, err := a.Compact(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	if !replaceByReopening {
		stopReaders()
	}
}
