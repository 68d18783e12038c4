//go:build unix

package main

// The torture test of issue 15: eight cryptvol processes at a time doing
// random put, rm, mv and mkdir on one volume, in phases: while `cryptvol
// mount` has the volume and the test writes, renames and removes files
// through the mount (every command must then be refused, exit 5, "is
// mounted at"), and with the volume unmounted (the processes race each
// other for the lock: exit 0 or 5). After every phase `fsck.fat -n` on the
// export and `cryptvol fsck` must find the filesystem clean and the volume
// must hold exactly what the successful commands and the writes through
// the mount left, in their order (a refused command changes nothing).
//
// The default `go test` runs 6 rounds (8 commands each, a few seconds).
// The long run, 200 rounds:
//
//	CRYPTVOL_TORTURE=1 go test ./cmd/cryptvol -run 'TestTorture$' -v -timeout 1h
//
// or -args -torture.rounds=N -torture.seed=S (the seed is logged; the same
// seed replays the same commands, though not their timing).

import (
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/keep"
	"github.com/cryptvol/cryptvol/mount"
)

var (
	tortureRounds = flag.Int("torture.rounds", 0, "rounds of TestTorture (default 6; 200 with CRYPTVOL_TORTURE=1)")
	tortureSeed   = flag.Int64("torture.seed", 0, "seed of TestTorture (default: from the clock; logged)")
)

// longCampaigns reports whether the long torture and kill runs are asked
// for ($CRYPTVOL_TORTURE set).
func longCampaigns() bool { return os.Getenv("CRYPTVOL_TORTURE") != "" }

const tortureWorkers = 8

var mountedRefusal = regexp.MustCompile(`is mounted at .* by PID [0-9]+`)

func TestTorture(t *testing.T) {
	if _, err := os.Stat(cvBin()); err != nil && cvBin() != "cryptvol" {
		t.Fatalf("$CRYPTVOL_TEST_BIN: %v", err)
	}
	rounds, phaseLen := 6, 2
	if longCampaigns() {
		rounds, phaseLen = 200, 10
	}
	if *tortureRounds > 0 {
		rounds = *tortureRounds
		if rounds >= 20 {
			phaseLen = 10
		}
	}
	seed := *tortureSeed
	if seed == 0 {
		seed = time.Now().UnixNano() % 1e9
	}
	t.Logf("torture: %d rounds of %d processes, phases of %d rounds, seed %d (replay: -args -torture.seed=%d -torture.rounds=%d)",
		rounds, tortureWorkers, phaseLen, seed, seed, rounds)
	rng := rand.New(rand.NewSource(seed))

	dir := t.TempDir()
	run, tmp := filepath.Join(dir, "run"), filepath.Join(dir, "tmp")
	env := cvEnviron(run, tmp)
	t.Cleanup(func() { keep.RemoveKeyring(harnessKeyring()) })
	os.WriteFile(filepath.Join(dir, "pw"), []byte("torture test password\n"), 0o600)
	creds := []string{"--password-file", filepath.Join(dir, "pw"), "--pim", "1", "--hash", "SHA-256", "--encryption", "AES"}
	vol := filepath.Join(dir, "v.hc")
	size, fsType := "24M", "fat16"
	if rng.Intn(2) == 0 {
		size, fsType = "40M", "fat32"
	}
	if r := cvRun(env, time.Minute, append([]string{"create", vol, "--size", size, "--quick", "--filesystem", fsType, "--non-interactive"}, creds...)...); r.code != 0 {
		t.Fatalf("create: %v", r)
	}
	if r := cvRun(env, time.Minute, append([]string{"mkdir", vol, "/shared"}, creds...)...); r.code != 0 {
		t.Fatalf("mkdir /shared: %v", r)
	}
	t.Logf("volume: %s, %s", size, fsType)

	ws := make([]*tortureWorker, tortureWorkers)
	for i := range ws {
		ws[i] = &tortureWorker{id: i, rng: rand.New(rand.NewSource(seed + int64(i) + 1)), own: tree{},
			src: filepath.Join(dir, "src", fmt.Sprint(i)), vol: vol}
		os.MkdirAll(ws[i].src, 0o700)
	}
	mw := &mountWriter{rng: rand.New(rand.NewSource(seed - 1)), files: tree{}}

	fuseErr := mount.Available()
	if fuseErr != nil {
		t.Logf("NOT CHECKED: the mounted phases (%v): every phase runs without a mount", fuseErr)
	}
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	t.Cleanup(func() { cleanupMounts(t, dir, run) })

	check := func(when string) {
		t.Helper()
		want := tree{"/shared": {dir: true}}
		for k, v := range mw.files {
			want[k] = v
		}
		for _, w := range ws {
			for k, v := range w.own {
				want[k] = v
			}
		}
		img := filepath.Join(dir, "check", "plain.img")
		os.MkdirAll(filepath.Dir(img), 0o700)
		defer os.Remove(img)
		if r := cvRun(env, time.Minute, append([]string{"export", vol, img, "--force"}, creds...)...); r.code != 0 {
			t.Fatalf("%s: export: %v", when, r)
		}
		v := fsckBoth(env, vol, img, creds)
		if v.fatMissing {
			t.Logf("NOT CHECKED: fsck.fat is not installed (dosfstools)")
		}
		if !v.clean() {
			t.Errorf("%s: the filesystem is not clean:\n%v", when, v)
		}
		got, err := readTree(img)
		if err != nil {
			t.Errorf("%s: reading the exported filesystem: %v", when, err)
		}
		for k := range got {
			if isTemp(k) {
				t.Errorf("%s: temporary entry %s left in the volume", when, k)
			}
		}
		if d := diff(want, got, 20); len(d) > 0 {
			t.Errorf("%s: the volume does not hold what the successful commands left:\n%s", when, strings.Join(d, "\n"))
		}
		if t.Failed() {
			t.FailNow()
		}
	}

	round, mounts := 0, 0
	for phase := 0; round < rounds; phase++ {
		mounted := phase%2 == 1 && fuseErr == nil
		var stopWriter func() error
		if mounted {
			if r := cvRun(env, time.Minute, append([]string{"mount", vol, mnt}, creds...)...); r.code != 0 {
				t.Fatalf("phase %d: mount: %v", phase, r)
			}
			mounts++
			stopWriter = mw.start(mnt)
		}
		for r := 0; r < phaseLen && round < rounds; r++ {
			runTortureRound(t, env, creds, ws, mounted)
			round++
		}
		if mounted {
			// The writer has had its say in the phase before it stops.
			for deadline := time.Now().Add(30 * time.Second); mw.phaseFiles() < 3 && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if err := stopWriter(); err != nil {
				t.Fatalf("phase %d: writing through the mount: %v", phase, err)
			}
			if r := cvRun(env, time.Minute, "unmount", mnt); r.code != 0 {
				t.Fatalf("phase %d: unmount: %v", phase, r)
			}
			waitDaemonsGone(t, run)
		}
		what := "unmounted"
		if mounted {
			what = "mounted"
		}
		check(fmt.Sprintf("after phase %d (%s, rounds to %d)", phase, what, round))
	}

	var tot tortureCounts
	for _, w := range ws {
		tot.add(w.counts)
		t.Logf("process %d: unmounted %d succeeded, %d refused; mounted %d refused; by command %v", w.id, w.counts.ok, w.counts.refused, w.counts.refusedMounted, w.byOp)
	}
	t.Logf("torture: %d commands: unmounted phases %d succeeded, %d refused (exit 5, lock held by another); mounted phases (%d mounts) %d refused, %d succeeded; through the mount %d files written, %d renamed, %d removed, %d directories, %d writes refused as the volume was full",
		rounds*tortureWorkers, tot.ok, tot.refused, mounts, tot.refusedMounted, tot.okMounted, mw.written, mw.renamed, mw.removed, mw.dirs, mw.full)
	if tot.ok == 0 {
		t.Error("no command ever got the volume")
	}
	if fuseErr == nil && mounts > 0 && mw.written == 0 {
		t.Error("nothing was written through the mount")
	}
}

type tortureCounts struct{ ok, refused, refusedMounted, okMounted int }

func (c *tortureCounts) add(o tortureCounts) {
	c.ok += o.ok
	c.refused += o.refused
	c.refusedMounted += o.refusedMounted
	c.okMounted += o.okMounted
}

// waitDaemonsGone waits until no mount daemon recorded in run is alive
// (unmount may return before the daemon has let go of the lock).
func waitDaemonsGone(t *testing.T, run string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		es, _ := mount.Table{Dir: run}.Entries()
		alive := false
		for _, e := range es {
			if mount.ProcessAlive(e.PID) {
				alive = true
			}
		}
		if !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a mount daemon is still running 30 s after unmount: %+v", es)
		}
	}
}

// runTortureRound starts one command of every worker at about the same
// time (each after a random pause of up to 150 ms, about one command's
// run, so that some race and some follow) and waits for all.
func runTortureRound(t *testing.T, env, creds []string, ws []*tortureWorker, mounted bool) {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, args, apply := w.next()
			time.Sleep(time.Duration(w.rng.Intn(150)) * time.Millisecond)
			r := cvRun(env, 2*time.Minute, append(args, creds...)...)
			if w.byOp == nil {
				w.byOp = map[string]int{}
			}
			switch {
			case r.code == 0:
				apply()
				w.byOp[op]++
				if mounted {
					w.counts.okMounted++
					t.Errorf("process %d: %s succeeded while the volume was mounted: %v", w.id, strings.Join(args, " "), r)
				} else {
					w.counts.ok++
				}
			case r.code == exitDestroy && mounted:
				w.counts.refusedMounted++
				if !mountedRefusal.MatchString(r.out) {
					t.Errorf("process %d: %s, during the mount, was refused without naming the mount: %v", w.id, strings.Join(args, " "), r)
				}
			case r.code == exitDestroy:
				w.counts.refused++
				if !lockRefusal.MatchString(r.out) {
					t.Errorf("process %d: %s exited 5 without the lock's message: %v", w.id, strings.Join(args, " "), r)
				}
			default:
				t.Errorf("process %d: %s: %v (want exit 0, or 5 for a held lock)", w.id, strings.Join(args, " "), r)
			}
		}()
	}
	wg.Wait()
}

// tortureWorker is one of the eight processes' sequence of commands, on
// names of its own (below its own directories, in /shared and in /), with
// the model of what its successful commands left.
type tortureWorker struct {
	id     int
	rng    *rand.Rand
	own    tree
	seq    int
	src    string // its local source files
	vol    string
	counts tortureCounts
	byOp   map[string]int // successful commands by kind
}

func (w *tortureWorker) sorted(dirs bool) []string {
	var l []string
	for k, n := range w.own {
		if n.dir == dirs {
			l = append(l, k)
		}
	}
	sort.Strings(l)
	return l
}

// parent picks a directory for a new name: /, /shared or one of its own.
func (w *tortureWorker) parent(not string) string {
	cands := []string{"/", "/shared"}
	for _, d := range w.sorted(true) {
		if not == "" || (d != not && !strings.HasPrefix(d, not+"/")) {
			cands = append(cands, d)
		}
	}
	return cands[w.rng.Intn(len(cands))]
}

// next picks the worker's next command: a name for its kind, the
// arguments (without credentials) and what its success changes.
func (w *tortureWorker) next() (string, []string, func()) {
	w.seq++
	files, dirs := w.sorted(false), w.sorted(true)
	n := w.rng.Intn(100)
	if w.own.bytes() > workerBudget && len(files) > 0 {
		n = 12 // rm: the long run would otherwise fill the volume
	}
	switch {
	case n < 12:
		p := path.Join(w.parent(""), fmt.Sprintf("w%dd%d", w.id, w.seq))
		return "mkdir", []string{"mkdir", w.vol, p}, func() { w.own[p] = node{dir: true} }
	case n < 25 && len(files) > 0:
		p := files[w.rng.Intn(len(files))]
		return "rm", []string{"rm", w.vol, p}, func() { delete(w.own, p) }
	case n < 30 && len(dirs) > 0:
		p := dirs[w.rng.Intn(len(dirs))]
		return "rm -r", []string{"rm", w.vol, p, "-r"}, func() {
			for _, k := range w.own.under(p) {
				delete(w.own, k)
			}
		}
	case n < 45 && len(files) > 0:
		p := files[w.rng.Intn(len(files))]
		q := path.Join(w.parent(""), fmt.Sprintf("w%d-%d.mv", w.id, w.seq))
		return "mv", []string{"mv", w.vol, p, q}, func() { w.own.move(p, q) }
	case n < 52 && len(files) > 1:
		p := files[w.rng.Intn(len(files))]
		q := files[w.rng.Intn(len(files))]
		for q == p {
			q = files[w.rng.Intn(len(files))]
		}
		return "mv --force", []string{"mv", w.vol, p, q, "--force"}, func() {
			w.own[q] = w.own[p]
			delete(w.own, p)
		}
	case n < 58 && len(dirs) > 0:
		p := dirs[w.rng.Intn(len(dirs))]
		q := path.Join(w.parent(p), fmt.Sprintf("w%dd%d", w.id, w.seq))
		return "mv DIR", []string{"mv", w.vol, p, q}, func() { w.own.move(p, q) }
	case n < 66 && len(files) > 0:
		p := files[w.rng.Intn(len(files))]
		data, src := w.source()
		return "put --force", []string{"put", w.vol, src, p, "--force"}, func() { w.own[p] = node{data: data} }
	}
	p := path.Join(w.parent(""), fmt.Sprintf("w%d-%d.bin", w.id, w.seq))
	data, src := w.source()
	return "put", []string{"put", w.vol, src, p}, func() { w.own[p] = node{data: data} }
}

// source writes a new local file of a random size (empty, within one
// cluster, a few clusters, many) and returns its content and path.
func (w *tortureWorker) source() ([]byte, string) {
	var size int
	switch n := w.rng.Intn(20); {
	case n < 2:
		size = 0
	case n < 13:
		size = 1 + w.rng.Intn(8<<10)
	case n < 19:
		size = 8<<10 + w.rng.Intn(56<<10)
	default:
		size = 64<<10 + w.rng.Intn(336<<10)
	}
	data := make([]byte, size)
	w.rng.Read(data)
	src := filepath.Join(w.src, fmt.Sprint(w.seq))
	os.WriteFile(src, data, 0o600)
	return data, src
}

// mountWriter writes, renames and removes files through the mount, below
// /m, and keeps what returned success.
type mountWriter struct {
	rng                             *rand.Rand
	mu                              sync.Mutex
	files                           tree
	seq                             int
	inPhase                         int
	written, renamed, removed, dirs int
	full                            int // writes refused with ENOSPC
}

func (m *mountWriter) phaseFiles() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inPhase
}

// start begins writing through the mount at mnt; the returned function
// stops the writer and returns its first error.
func (m *mountWriter) start(mnt string) func() error {
	stop, done := make(chan struct{}), make(chan error, 1)
	m.inPhase = 0
	go func() {
		root, err := os.OpenRoot(mnt)
		if err != nil {
			done <- err
			return
		}
		defer root.Close()
		if _, ok := m.files["/m"]; !ok {
			if err := root.Mkdir("m", 0o755); err != nil {
				done <- err
				return
			}
			m.mu.Lock()
			m.files["/m"] = node{dir: true}
			m.mu.Unlock()
		}
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := m.step(root); err != nil {
				done <- err
				return
			}
		}
	}()
	return func() error {
		close(stop)
		return <-done
	}
}

// step does one thing through the mount.
func (m *mountWriter) step(root *os.Root) error {
	m.seq++
	var files, dirs []string
	for k, n := range m.files {
		if n.dir {
			dirs = append(dirs, k)
		} else {
			files = append(files, k)
		}
	}
	sort.Strings(files)
	sort.Strings(dirs)
	rel := func(p string) string { return strings.TrimPrefix(p, "/") }
	n := m.rng.Intn(20)
	if m.files.bytes() > writerBudget && len(files) > 0 {
		n = 5 // remove: the long run would otherwise fill the volume
	}
	switch {
	case n < 2 && len(dirs) < 6:
		p := path.Join(dirs[m.rng.Intn(len(dirs))], fmt.Sprintf("d%d", m.seq))
		if err := root.Mkdir(rel(p), 0o755); err != nil {
			return err
		}
		m.mu.Lock()
		m.files[p] = node{dir: true}
		m.dirs++
		m.mu.Unlock()
		return nil
	case n < 5 && len(files) > 0:
		p := files[m.rng.Intn(len(files))]
		q := path.Join(dirs[m.rng.Intn(len(dirs))], fmt.Sprintf("r%d.bin", m.seq))
		if err := root.Rename(rel(p), rel(q)); err != nil {
			return err
		}
		m.mu.Lock()
		m.files.move(p, q)
		m.renamed++
		m.mu.Unlock()
		return nil
	case n < 7 && len(files) > 0:
		p := files[m.rng.Intn(len(files))]
		if err := root.Remove(rel(p)); err != nil {
			return err
		}
		m.mu.Lock()
		delete(m.files, p)
		m.removed++
		m.mu.Unlock()
		return nil
	}
	p := path.Join(dirs[m.rng.Intn(len(dirs))], fmt.Sprintf("f%d.bin", m.seq))
	data := make([]byte, m.rng.Intn(200<<10))
	m.rng.Read(data)
	f, err := root.Create(rel(p))
	if errors.Is(err, syscall.ENOSPC) { // no room for its directory entry
		if rerr := root.Remove(rel(p)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			return fmt.Errorf("%s: removing after ENOSPC: %w", p, rerr)
		}
		return m.makeRoom(root, files)
	}
	if err != nil {
		return err
	}
	for off := 0; off < len(data) && err == nil; off += 32 << 10 {
		_, err = f.Write(data[off:min(off+32<<10, len(data))])
	}
	if err == nil && m.rng.Intn(2) == 0 {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.ENOSPC) {
		// A full volume is an answer, not a loss: the file did not
		// succeed, so it goes.
		if rerr := root.Remove(rel(p)); rerr != nil {
			return fmt.Errorf("%s: removing after ENOSPC: %w", p, rerr)
		}
		return m.makeRoom(root, files)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	m.mu.Lock()
	m.files[p] = node{data: data}
	m.written++
	m.inPhase++
	m.mu.Unlock()
	return nil
}

// makeRoom answers a write refused with ENOSPC: one older file goes (the
// long run writes far more than the volume holds).
func (m *mountWriter) makeRoom(root *os.Root, files []string) error {
	m.mu.Lock()
	m.full++
	m.mu.Unlock()
	if len(files) == 0 {
		return nil
	}
	q := files[m.rng.Intn(len(files))]
	if err := root.Remove(strings.TrimPrefix(q, "/")); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	m.mu.Lock()
	delete(m.files, q)
	m.removed++
	m.mu.Unlock()
	return nil
}

// The long run's files stay within these budgets (8 workers and the
// mount writer: 16 MiB of the smaller, 24 MiB volume), so that every
// command succeeds or is refused for the lock, as the issue asks; a full
// volume is tested elsewhere (put's space check, the writer's ENOSPC).
const (
	workerBudget = 1536 << 10
	writerBudget = 4 << 20
)

// bytes is the total size of the files in t.
func (t tree) bytes() int {
	n := 0
	for _, x := range t {
		n += len(x.data)
	}
	return n
}
