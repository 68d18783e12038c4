// Package archivebench measures what the archive package is for: many
// small files (thumbnails of 3-10 KB) kept as plain files, in a zip
// (archive/zip) and in an encrypted archive. For each it times adding one
// more file durably, reading them all with a cold and a warm page cache,
// and counts the bytes used on disk; then it shows how appending one file
// scales with the number of members, for the archive and for a zip. All
// figures come from one run, so their ratios compare like with like.
// `cryptvol benchmark archive` prints them.
package archivebench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/archive"
	"github.com/cryptvol/cryptvol/internal/stats"
)

// Options say what to measure. Zero values take the defaults.
type Options struct {
	Dir     string // where the stores are made (a fresh directory inside it); default os.TempDir()
	Files   int    // files in the comparison; default 500
	MinSize int    // smallest file; default 3 KiB
	MaxSize int    // largest file; default 10 KiB
	Reps    int    // repetitions of each read measurement (the median counts, with min–max); default 5
	// Sizes are the member counts of the append-scaling measurement;
	// nil means 1,000 and 100,000, an empty non-nil slice skips it.
	Sizes   []int
	Appends int // appends timed per size and store; default 15 (zip: a third, at least 3)
	// Content is "jpeg" (the default: JPEG thumbnails, at most 1 MiB
	// each) or "random" (uniformly random bytes: the best case for a
	// deflated zip, which then stores them; see thumbnail.go).
	Content string
	Seed    uint64
	// Progress, if set, is told what is being measured.
	Progress func(stage string)
}

func (o *Options) defaults() error {
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.Files == 0 {
		o.Files = 500
	}
	if o.MinSize == 0 {
		o.MinSize = 3 << 10
	}
	if o.MaxSize == 0 {
		o.MaxSize = 10 << 10
	}
	if o.Reps == 0 {
		o.Reps = 5
	}
	if o.Sizes == nil {
		o.Sizes = []int{1000, 100_000}
	}
	if o.Appends == 0 {
		o.Appends = 15
	}
	if o.Content == "" {
		o.Content = "jpeg"
	}
	switch {
	case o.Files < 1 || o.Files > 10_000_000:
		return fmt.Errorf("archivebench: %d files: want 1 to 10,000,000", o.Files)
	case o.MinSize < 0 || o.MaxSize < o.MinSize || o.MaxSize > 64<<20:
		return fmt.Errorf("archivebench: file sizes %d-%d: want 0 <= min <= max <= 64 MiB", o.MinSize, o.MaxSize)
	case o.Reps < 1 || o.Appends < 1:
		return errors.New("archivebench: repetitions and appends must be at least 1")
	case o.Content != "jpeg" && o.Content != "random":
		return fmt.Errorf("archivebench: content %q: want jpeg or random", o.Content)
	case o.Content == "jpeg" && o.MaxSize > maxThumbnail:
		return fmt.Errorf("archivebench: JPEG thumbnails are at most 1 MiB (largest file %d): use random content", o.MaxSize)
	}
	for _, s := range o.Sizes {
		if s < 1 || s > 10_000_000 {
			return fmt.Errorf("archivebench: scaling size %d: want 1 to 10,000,000", s)
		}
	}
	return nil
}

// StoreResult is one store's figures in the comparison. Times are in
// seconds; ReadColdSeconds is nil where the page cache of one file cannot
// be dropped without privileges (everywhere but Linux).
type StoreResult struct {
	Store           string   `json:"store"`
	AddOneSeconds   float64  `json:"add_one_seconds"`
	ReadColdSeconds *float64 `json:"read_cold_seconds"`
	ReadWarmSeconds float64  `json:"read_warm_seconds"`
	DiskBytes       int64    `json:"disk_bytes"`
	ApparentBytes   int64    `json:"apparent_bytes"`
	// The times above are medians (before issue 28 the reads were the
	// fastest repetition); these are their ranges over the repetitions.
	MinAddOneSeconds   float64  `json:"min_add_one_seconds"`
	MaxAddOneSeconds   float64  `json:"max_add_one_seconds"`
	MinReadColdSeconds *float64 `json:"min_read_cold_seconds"`
	MaxReadColdSeconds *float64 `json:"max_read_cold_seconds"`
	MinReadWarmSeconds float64  `json:"min_read_warm_seconds"`
	MaxReadWarmSeconds float64  `json:"max_read_warm_seconds"`
}

// ScaleResult is the cost of appending one file to a store of Entries
// members (the median of the appends timed). Store is "archive" (Add and
// Commit on the open archive, synced), "archive-nosync" (the same without
// fsync: the format's own work), "archive-reopen" (open, add, commit,
// close, as `cryptvol archive add` does) or "zip" (rewrite the zip).
type ScaleResult struct {
	Store          string  `json:"store"`
	Entries        int     `json:"entries"`
	Appends        int     `json:"appends"`
	AppendSeconds  float64 `json:"append_seconds"`
	FastestSeconds float64 `json:"fastest_seconds"`
	// SlowestSeconds closes the range FastestSeconds opens.
	SlowestSeconds float64 `json:"slowest_seconds"`
	// BytesWritten is what one append writes, on average: the growth of
	// the archive, the whole new zip.
	BytesWritten int64 `json:"bytes_written"`
	// For the archive: the time to open it (read and check the index)
	// and the memory its index takes.
	OpenSeconds       float64 `json:"open_seconds,omitempty"`
	IndexMemoryBytes  int     `json:"index_memory_bytes,omitempty"`
	IndexSegmentsRead int     `json:"index_segments_read,omitempty"`
}

// Result is the whole run.
type Result struct {
	Dir        string        `json:"dir"`
	Content    string        `json:"content"` // jpeg or random
	Threads    int           `json:"threads"` // cores the "archive" store's Walk decrypts on
	Files      int           `json:"files"`
	TotalBytes int64         `json:"total_bytes"`
	MinSize    int           `json:"min_size"` // of the files made
	MaxSize    int           `json:"max_size"`
	Reps       int           `json:"reps"`
	DiskUsage  bool          `json:"disk_usage_measured"` // false: apparent sizes only
	Stores     []StoreResult `json:"stores"`
	Scaling    []ScaleResult `json:"scaling"`
}

// Store returns the figures of the named store.
func (r *Result) Store(name string) *StoreResult {
	for i := range r.Stores {
		if r.Stores[i].Store == name {
			return &r.Stores[i]
		}
	}
	return nil
}

// Scale returns the scaling figures of a store at a size.
func (r *Result) Scale(store string, entries int) *ScaleResult {
	for i := range r.Scaling {
		if r.Scaling[i].Store == store && r.Scaling[i].Entries == entries {
			return &r.Scaling[i]
		}
	}
	return nil
}

// corpus generates the files, deterministically: JPEG thumbnails of sizes
// near uniform between min and max (thumbnail.go), or with random set,
// uniformly random bytes of exactly those sizes.
type corpus struct {
	seed     uint64
	min, max int
	random   bool
	thumbs   *thumbnails
}

func newCorpus(seed uint64, min, max int, content string) corpus {
	return corpus{seed: seed, min: min, max: max, random: content == "random", thumbs: new(thumbnails)}
}

func (c corpus) name(i int) string { return fmt.Sprintf("thumbs/img-%07d.jpg", i) }

func (c corpus) size(i int) int {
	r := rand.New(rand.NewPCG(c.seed, uint64(i)))
	return c.min + r.IntN(c.max-c.min+1)
}

// data fills buf with file i's contents.
func (c corpus) data(i int, buf []byte) []byte {
	if !c.random {
		return append(buf[:0], c.thumbnail(i)...)
	}
	var seed [32]byte
	for k := 0; k < 8; k++ {
		seed[k] = byte(c.seed >> (8 * k))
		seed[8+k] = byte(uint64(i) >> (8 * k))
	}
	n := c.size(i)
	buf = slices.Grow(buf[:0], n)[:n]
	rand.NewChaCha8(seed).Read(buf)
	return buf
}

// store is one way of keeping the files.
type store interface {
	name() string
	// build makes the store holding files 0..n-1.
	build(ctx context.Context, c corpus, n int) error
	// addOne adds file i durably, as a program adding one file would:
	// open what it must, write, sync, close.
	addOne(c corpus, i int) error
	// readAll opens the store and reads every file; it returns the bytes
	// read.
	readAll() (int64, error)
	// files are the paths the store occupies.
	files() ([]string, error)
	close() error
}

// Run measures. It removes everything it made before returning.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	progress := func(s string) {
		if o.Progress != nil {
			o.Progress(s)
		}
	}
	dir, err := os.MkdirTemp(o.Dir, "cryptvol-archive-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	c := newCorpus(o.Seed, o.MinSize, o.MaxSize, o.Content)
	res := &Result{Dir: o.Dir, Content: o.Content, Threads: runtime.GOMAXPROCS(0), Files: o.Files, Reps: o.Reps, Scaling: []ScaleResult{}}
	progress("making the files")
	var buf []byte
	for i := 0; i < o.Files; i++ {
		buf = c.data(i, buf)
		n := len(buf)
		if i == 0 || n < res.MinSize {
			res.MinSize = n
		}
		res.MaxSize = max(res.MaxSize, n)
		res.TotalBytes += int64(n)
	}

	stores := []store{
		&plainStore{dir: filepath.Join(dir, "files")},
		&zipStore{path: filepath.Join(dir, "deflate.zip"), label: "zip", method: zipDeflate},
		&zipStore{path: filepath.Join(dir, "stored.zip"), label: "zip-store", method: zipStored},
		newArchiveStore(filepath.Join(dir, "thumbs.cva")),
		&archiveStore{path: filepath.Join(dir, "thumbs-1core.cva"), cred: newArchiveStore("").cred, threads: 1},
		&archiveStore{path: filepath.Join(dir, "thumbs-1by1.cva"), cred: newArchiveStore("").cred, oneByOne: true},
	}
	defer func() {
		for _, s := range stores {
			s.close()
		}
	}()
	for _, s := range stores {
		progress("building " + s.name())
		if err := s.build(ctx, c, o.Files); err != nil {
			return nil, fmt.Errorf("%s: %w", s.name(), err)
		}
		fs, err := s.files()
		if err != nil {
			return nil, err
		}
		r := StoreResult{Store: s.name()}
		for _, f := range fs {
			fi, err := os.Stat(f)
			if err != nil {
				return nil, err
			}
			d, ok := diskBytes(fi)
			r.DiskBytes += d
			r.ApparentBytes += fi.Size()
			res.DiskUsage = ok
		}
		res.Stores = append(res.Stores, r)
	}

	// Reads: repetitions interleaved across the stores, so that a burst of
	// load on the machine hits them all alike; the median of each counts,
	// reported with its range.
	cold := make([][]float64, len(stores))
	warm := make([][]float64, len(stores))
	coldOK := true
	for rep := 0; rep < o.Reps; rep++ {
		for i, s := range stores {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			progress(fmt.Sprintf("reading %s (%d/%d)", s.name(), rep+1, o.Reps))
			fs, err := s.files()
			if err != nil {
				return nil, err
			}
			for _, f := range fs {
				ok, err := dropCache(f)
				if err != nil {
					return nil, err
				}
				coldOK = coldOK && ok
			}
			t, err := timeRead(s, res.TotalBytes)
			if err != nil {
				return nil, err
			}
			cold[i] = append(cold[i], t)
			if _, err := s.readAll(); err != nil { // make sure it is all cached
				return nil, err
			}
			t, err = timeRead(s, res.TotalBytes)
			if err != nil {
				return nil, err
			}
			warm[i] = append(warm[i], t)
		}
	}
	for i := range stores {
		st := &res.Stores[i]
		st.ReadWarmSeconds, st.MinReadWarmSeconds, st.MaxReadWarmSeconds = medianOf(warm[i]), slices.Min(warm[i]), slices.Max(warm[i])
		if coldOK {
			v, lo, hi := medianOf(cold[i]), slices.Min(cold[i]), slices.Max(cold[i])
			st.ReadColdSeconds, st.MinReadColdSeconds, st.MaxReadColdSeconds = &v, &lo, &hi
		}
	}

	// Add one more file to each, several times; the median counts.
	for i, s := range stores {
		progress("adding to " + s.name())
		var ts []float64
		for k := 0; k < max(3, o.Appends/3); k++ {
			t0 := time.Now()
			if err := s.addOne(c, o.Files+k); err != nil {
				return nil, fmt.Errorf("%s: %w", s.name(), err)
			}
			ts = append(ts, time.Since(t0).Seconds())
		}
		res.Stores[i].AddOneSeconds = medianOf(ts)
		res.Stores[i].MinAddOneSeconds, res.Stores[i].MaxAddOneSeconds = slices.Min(ts), slices.Max(ts)
	}
	for _, s := range stores {
		s.close()
	}
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}

	if len(o.Sizes) > 0 {
		rs, err := scale(ctx, dir, c, o.Sizes, o.Appends, progress)
		if err != nil {
			return nil, err
		}
		res.Scaling = rs
	}
	return res, nil
}

func timeRead(s store, want int64) (float64, error) {
	t0 := time.Now()
	n, err := s.readAll()
	d := time.Since(t0).Seconds()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.name(), err)
	}
	if n != want {
		return 0, fmt.Errorf("%s: read %d bytes, want %d", s.name(), n, want)
	}
	return d, nil
}

// scale builds an archive and a zip of each size, then times appending one
// file to each. The appends are interleaved across the sizes (one to each
// in turn), so that the disk's fsync latency, which varies with whatever
// else the machine is doing, weighs on all sizes alike.
func scale(ctx context.Context, dir string, c corpus, sizes []int, appends int, progress func(string)) ([]ScaleResult, error) {
	archives := make([]*archiveStore, len(sizes))
	zips := make([]*zipStore, len(sizes))
	for i, n := range sizes {
		archives[i] = newArchiveStore(filepath.Join(dir, fmt.Sprintf("scale-%d.cva", n)))
		zips[i] = &zipStore{path: filepath.Join(dir, fmt.Sprintf("scale-%d.zip", n)), label: "zip", method: zipDeflate}
		progress(fmt.Sprintf("building an archive and a zip of %d files", n))
		if err := archives[i].build(ctx, c, n); err != nil {
			return nil, err
		}
		if err := zips[i].build(ctx, c, n); err != nil {
			return nil, err
		}
	}
	res := make([]ScaleResult, 0, 4*len(sizes))
	for i, n := range sizes {
		t0 := time.Now()
		a, err := archives[i].open(true)
		if err != nil {
			return nil, err
		}
		res = append(res, ScaleResult{Store: "archive", Entries: n, Appends: appends, OpenSeconds: time.Since(t0).Seconds(),
			IndexMemoryBytes: a.IndexMemory(), IndexSegmentsRead: a.Segments()})
		a.Close()
	}
	next := make([]int, len(sizes)) // the next file number to add, per size
	for i, n := range sizes {
		next[i] = n
	}
	// timeAppends runs rounds of one timed append per size and returns
	// the times per size, and the bytes each wrote: the growth of path(i),
	// or its whole size if rewrite.
	written := make([]int64, len(sizes))
	timeAppends := func(what string, rounds int, path func(i int) string, rewrite bool, add func(i, file int) error) ([][]float64, error) {
		progress("appending: " + what)
		ts := make([][]float64, len(sizes))
		clear(written)
		for r := 0; r < rounds; r++ {
			for i := range sizes {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				before := fileSize(path(i))
				t0 := time.Now()
				if err := add(i, next[i]); err != nil {
					return nil, err
				}
				ts[i] = append(ts[i], time.Since(t0).Seconds())
				next[i]++
				if rewrite {
					written[i] += fileSize(path(i))
				} else {
					written[i] += fileSize(path(i)) - before
				}
			}
		}
		return ts, nil
	}
	record := func(store string, ts [][]float64) {
		for i, n := range sizes {
			r := ScaleResult{Store: store, Entries: n, Appends: len(ts[i]), AppendSeconds: medianOf(ts[i]),
				FastestSeconds: slices.Min(ts[i]), SlowestSeconds: slices.Max(ts[i]), BytesWritten: written[i] / int64(len(ts[i]))}
			if store == "archive" {
				res[i].Appends, res[i].AppendSeconds, res[i].FastestSeconds, res[i].SlowestSeconds, res[i].BytesWritten = r.Appends, r.AppendSeconds, r.FastestSeconds, r.SlowestSeconds, r.BytesWritten
				continue
			}
			res = append(res, r)
		}
	}
	archivePath := func(i int) string { return archives[i].path }
	zipPath := func(i int) string { return zips[i].path }

	// The archive kept open, as a program using it would: Add + Commit,
	// synced; then the same without fsync, which leaves the work the
	// format itself does.
	for _, noSync := range []bool{false, true} {
		open := make([]*archive.Archive, len(sizes))
		for i := range sizes {
			a, err := archive.Open(ctx, archives[i].path, archives[i].cred, &archive.OpenOptions{NoSync: noSync})
			if err != nil {
				return nil, err
			}
			defer a.Close()
			open[i] = a
		}
		what, store := "archive", "archive"
		if noSync {
			what, store = "archive without fsync", "archive-nosync"
		}
		buf := make([]byte, 0, c.max)
		ts, err := timeAppends(what, appends, archivePath, false, func(i, file int) error {
			buf = c.data(file, buf)
			return appendOpen(open[i], c.name(file), buf)
		})
		if err != nil {
			return nil, err
		}
		record(store, ts)
		for _, a := range open {
			a.Close()
		}
	}
	// The command line's path: open, add, commit, close.
	rounds := max(3, appends/3)
	ts, err := timeAppends("archive, reopened each time", rounds, archivePath, false, func(i, file int) error { return archives[i].addOne(c, file) })
	if err != nil {
		return nil, err
	}
	record("archive-reopen", ts)
	ts, err = timeAppends("zip", rounds, zipPath, true, func(i, file int) error { return zips[i].addOne(c, file) })
	if err != nil {
		return nil, err
	}
	record("zip", ts)
	for i := range sizes {
		os.Remove(archives[i].path)
		os.Remove(zips[i].path)
	}
	return res, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// medianOf is the median of ts.
func medianOf(ts []float64) float64 {
	med, _, _ := stats.MedianRange(ts)
	return med
}

// ParseSizes reads a list of member counts for Options.Sizes: comma
// separated, '_' allowed between digits ("1_000,100_000"); "" or "none"
// is the empty list, which skips the append scaling.
func ParseSizes(s string) ([]int, error) {
	sizes := []int{}
	if s = strings.TrimSpace(s); s == "" || s == "none" {
		return sizes, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.ReplaceAll(strings.TrimSpace(f), "_", ""))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("archivebench: %q is not a member count", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
