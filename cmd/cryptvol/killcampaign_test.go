//go:build unix

package main

// The kill -9 campaign of issue 15: SIGKILL at random points of put, rm,
// mv, mv --force, passwd, keyslot add and change (LUKS), header restore
// (VeraCrypt and LUKS), format, archive add and compact, and of the mount
// daemon while files are written through the mount; each kill is followed
// by the next ordinary command on that volume or archive (a put, or an
// archive add), and then counted:
//
//   - lost pre-existing files: files there before the killed command, not
//     its target, missing or changed afterwards (and, for the mount,
//     files whose fsync had returned);
//   - torn targets: the command's own target in neither its old nor its
//     new state (a file half-written, a moved file under both names);
//   - cross-links: fsck.fat -n on `cryptvol export`, and `cryptvol fsck`;
//   - decrypted leftovers: files in the volume's directory, $TMPDIR or
//     the runtime directory holding marked plaintext of the files inside;
//   - volumes that no longer open: passwd, keyslot and header restore must
//     leave a volume that opens with the old or the new credentials;
//   - archives whose intact members are lost;
//   - next commands that fail, and commands that fail when not killed.
//
// Before the kills, each command runs to its end (three times in the
// long run, and again every 50 kills) to measure its duration, from the
// start of the process to its exit, and its write system calls (syscw in
// /proc/PID/io). Half the kill points are drawn uniformly over that
// duration; the other half uniformly over the write calls: the process
// is killed as soon as it is seen to have made the Nth one (most of a
// command's run is start-up and key derivation, so the second half is
// what hits the moments between writes). A kill that comes after the
// command has ended is not counted, and the case is checked all the same.
//
// The default `go test` kills 26 times (2 per operation, some seconds on
// two cores). The long run, over 1,000 kills on two workers:
//
//	CRYPTVOL_TORTURE=1 go test ./cmd/cryptvol -run 'TestKillCampaign$' -v -timeout 2h
//
// Flags (after -args): -kill.n N, -kill.ops put,mv-force,..., -kill.workers
// N, -kill.seed S, -kill.points time|writes|time,writes. Every failure is
// printed with the line that replays it:
//
//	go test ./cmd/cryptvol -run 'TestKillCampaign$' -v -args -kill.seed=S -kill.replay=OP/FIXTURE:CASE:POINT -kill.repeat=20
//
// (the same fixture and the same kill point: a delay such as 41.2ms, or
// w7 for the seventh write call; where a delay lands varies with the
// machine's load, hence -kill.repeat). -kill.keep=DIR copies the
// directories of failed cases there, each with its fixture (the original
// volume and the password files the command lines name).

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/keep"
	"github.com/cryptvol/cryptvol/mount"
)

var (
	killN       = flag.Int("kill.n", 0, "kills of TestKillCampaign (default 2 per operation; 1040 with CRYPTVOL_TORTURE=1)")
	killSeed    = flag.Int64("kill.seed", 0, "seed of TestKillCampaign (default: from the clock; logged)")
	killOpsFlag = flag.String("kill.ops", "", "comma-separated operations of TestKillCampaign (default all)")
	killWorkers = flag.Int("kill.workers", 2, "cases of TestKillCampaign run at once")
	killReplay  = flag.String("kill.replay", "", "OP:CASE:DELAY: run one case of TestKillCampaign again (with its -kill.seed)")
	killRepeat  = flag.Int("kill.repeat", 1, "with -kill.replay: how many times")
	killPoints  = flag.String("kill.points", "time,writes", "how TestKillCampaign picks kill points: time (uniform over the measured run), writes (uniform over its write system calls), or both, alternately")
	killKeep    = flag.String("kill.keep", "", "copy the directories of failed cases of TestKillCampaign below this directory")
)

// Finding categories. The ones in failing make the test fail.
const (
	fLost       = "lost pre-existing files"
	fTorn       = "torn targets"
	fCrossFat   = "cross-links (fsck.fat -n)"
	fCrossOurs  = "cross-links (cryptvol fsck)"
	fFsckOther  = "other fsck findings"
	fPlaintext  = "decrypted leftovers"
	fLeftover   = "temporary files left"
	fTempElse   = "temporary entries in other directories"
	fNoOpen     = "volumes that no longer open"
	fArchLost   = "archives with intact members lost"
	fNextFailed = "next commands failed"
	fUnkilled   = "commands failed without a kill"
	fUnexpected = "unexpected entries"
	fBackupHdr  = "opened with the backup header"
	fNoFS       = "format left no filesystem (by design)"
	fExt4Fsck   = "e2fsck -fn findings (ext4)"
)

var failing = map[string]bool{fLost: true, fTorn: true, fCrossFat: true, fCrossOurs: true, fPlaintext: true,
	fLeftover: true, fNoOpen: true, fArchLost: true, fNextFailed: true, fUnkilled: true, fUnexpected: true, fExt4Fsck: true}

var categories = []string{fLost, fTorn, fCrossFat, fCrossOurs, fNoOpen, fArchLost, fPlaintext, fLeftover,
	fNextFailed, fUnkilled, fUnexpected, fFsckOther, fTempElse, fBackupHdr, fNoFS, fExt4Fsck}

// credRule is what a command may do to the credentials that open.
type credRule int

const (
	oldOnly     credRule = iota // the credentials do not change
	oldOrNew                    // passwd, keyslot change, header restore
	oldAndMaybe                 // keyslot add: the old ones must still open
)

// killOp is one kind of command the campaign kills.
type killOp struct {
	name    string
	kinds   []string // fixtures it runs on (one chosen per case)
	prepare func(c *killCase)
	mount   bool // the mount daemon is killed, not a command
}

var killOps = []*killOp{
	{name: "put", kinds: vcKinds, prepare: preparePut},
	{name: "rm", kinds: vcKinds, prepare: prepareRm},
	{name: "mv", kinds: vcKinds, prepare: prepareMv},
	{name: "mv-force", kinds: vcKinds, prepare: prepareMvForce},
	{name: "passwd", kinds: vcKinds, prepare: preparePasswd},
	{name: "keyslot-add", kinds: []string{"luks1", "luks2"}, prepare: prepareKeyslotAdd},
	{name: "keyslot-change", kinds: []string{"luks1", "luks2"}, prepare: prepareKeyslotChange},
	{name: "restore-vc", kinds: []string{"vc-restore"}, prepare: prepareRestore},
	{name: "restore-luks", kinds: []string{"luks-restore"}, prepare: prepareRestore},
	{name: "format", kinds: vcKinds, prepare: prepareFormat},
	{name: "archive-add", kinds: []string{"archive"}, prepare: prepareArchiveAdd},
	{name: "archive-compact", kinds: []string{"archive-holes"}, prepare: prepareArchiveCompact},
	{name: "mount", kinds: vcKinds, prepare: prepareMountKill, mount: true},
	// The in-process writers of exFAT and ext4 (issue 25): ext4's every
	// change is a journal transaction, replayed by the next command.
	{name: "put-exfat", kinds: []string{"vc-exfat"}, prepare: preparePut},
	{name: "rm-exfat", kinds: []string{"vc-exfat"}, prepare: prepareRm},
	{name: "mv-exfat", kinds: []string{"vc-exfat"}, prepare: prepareMv},
	{name: "put-ext4", kinds: []string{"vc-ext4"}, prepare: preparePut},
	{name: "rm-ext4", kinds: []string{"vc-ext4"}, prepare: prepareRm},
	{name: "mv-ext4", kinds: []string{"vc-ext4"}, prepare: prepareMv},
	{name: "mv-force-ext4", kinds: []string{"vc-ext4"}, prepare: prepareMvForce},
}

// vcKinds are VeraCrypt volumes with FAT12, FAT16 and FAT32.
var vcKinds = []string{"vc12", "vc16", "vc32"}

func TestKillCampaign(t *testing.T) {
	if _, err := exec.LookPath(cvBin()); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	ops := killOps
	if *killOpsFlag != "" {
		ops = nil
		for _, n := range strings.Split(*killOpsFlag, ",") {
			op := findKillOp(n)
			if op == nil {
				t.Fatalf("-kill.ops: no operation %q", n)
			}
			ops = append(ops, op)
		}
	}
	if mount.Available() != nil {
		for i, op := range ops {
			if op.name == "mount" {
				t.Logf("NOT CHECKED: kills of the mount daemon (%v)", mount.Available())
				ops = append(ops[:i:i], ops[i+1:]...)
				break
			}
		}
	}
	seed := *killSeed
	if seed == 0 {
		seed = time.Now().UnixNano() % 1e9
	}
	k := newKillCampaign(t, seed)
	if *killReplay != "" {
		k.replay(*killReplay, *killRepeat)
		return
	}
	total, calib := 2*len(ops), 1
	if longCampaigns() {
		// 80 per operation: a kill drawn after the command ended is not
		// counted, and 77 each came to 995 counted kills.
		total, calib = 1040, 3
	}
	if *killN > 0 {
		total = *killN
	}
	perOp := (total + len(ops) - 1) / len(ops)
	t.Logf("kill campaign: seed %d, %d operations, %d kills each, %d workers", seed, len(ops), perOp, *killWorkers)
	if !longCampaigns() {
		// One FAT type and one LUKS version per short run, so that it
		// makes few fixtures; the seed chooses.
		k.only = map[string]bool{vcKinds[seed%3]: true, []string{"luks1", "luks2"}[seed/3%2]: true}
	}
	k.makeFixtures(ops)

	modes := strings.Split(*killPoints, ",")
	for _, m := range modes {
		if m != "time" && m != "writes" {
			t.Fatalf("-kill.points %q: want time, writes or time,writes", *killPoints)
		}
	}

	// Each command's duration, from runs to the end, and its write calls,
	// from a run to the end under killat.
	var jobs []killJob
	for _, op := range ops {
		for i := 0; i < calib; i++ {
			jobs = append(jobs, killJob{op: op, point: runToEnd})
		}
		if contains(modes, "writes") && !op.mount {
			jobs = append(jobs, killJob{op: op, point: runToEnd, count: true})
		}
	}
	if err := killAtSupported(); err != nil && contains(modes, "writes") {
		t.Logf("kill points at write calls are taken by polling /proc/PID/io, not exactly: %v", err)
	}
	k.runJobs(jobs)
	// The kills, in waves: a kill that came too late is done again. The
	// operations are interleaved, so both workers mix them.
	for wave := 0; wave < 20; wave++ {
		jobs = jobs[:0]
		for n := 0; n < perOp; n++ {
			for _, op := range ops {
				if k.stats(op.name).kills+n >= perOp {
					continue
				}
				if longCampaigns() && n > 0 && n%50 == 0 {
					jobs = append(jobs, killJob{op: op, point: runToEnd})
				}
				if p, ok := k.pickPoint(op, modes[(k.stats(op.name).kills+n)%len(modes)]); ok {
					jobs = append(jobs, killJob{op: op, point: p})
				}
			}
		}
		if len(jobs) == 0 {
			break
		}
		k.runJobs(jobs)
	}
	k.report(ops)
}

// killPoint is where a case's command is killed: delay after its start,
// or when it has made writes write system calls (/proc/PID/io syscw);
// runToEnd is neither.
type killPoint struct {
	delay  time.Duration // >= 0: this long after the start
	writes int64         // > 0: at this many write calls
}

var runToEnd = killPoint{delay: -1}

func (p killPoint) none() bool { return p.delay < 0 && p.writes <= 0 }

func (p killPoint) String() string {
	switch {
	case p.writes > 0:
		return fmt.Sprintf("w%d", p.writes)
	case p.delay >= 0:
		return p.delay.String()
	}
	return "end"
}

func parseKillPoint(s string) (killPoint, error) {
	if s == "end" {
		return runToEnd, nil
	}
	if n, ok := strings.CutPrefix(s, "w"); ok {
		w, err := strconv.ParseInt(n, 10, 64)
		if err != nil || w <= 0 {
			return killPoint{}, fmt.Errorf("bad write count %q", s)
		}
		return killPoint{delay: -1, writes: w}, nil
	}
	d, err := time.ParseDuration(s)
	return killPoint{delay: d}, err
}

func findKillOp(name string) *killOp {
	for _, op := range killOps {
		if op.name == name {
			return op
		}
	}
	return nil
}

// killJob is one case to run.
type killJob struct {
	op    *killOp
	point killPoint
	index int
	count bool // only count its write calls (under killat), check nothing
}

// killCampaign holds the fixtures, the durations measured and the tally.
type killCampaign struct {
	t      *testing.T
	seed   int64
	dir    string
	mk     marker
	mu     sync.Mutex
	next   int // next case number
	tpls   map[string]*fixture
	tplMu  sync.Mutex
	durs   map[string][]time.Duration
	writes map[string][]int64 // write calls of the runs to the end
	byOp   map[string]*opStats
	fails  []string
	workSq int
	done   int             // cases run
	only   map[string]bool // when set, the VeraCrypt and LUKS fixtures used
	// unmeasured are the operations that never ran to their end.
	unmeasured map[string]bool
}

// kindsOf are the fixtures op runs on in this campaign.
func (k *killCampaign) kindsOf(op *killOp) []string {
	var l []string
	for _, kind := range op.kinds {
		if k.only == nil || k.only[kind] || !(contains(vcKinds, kind) || kind == "luks1" || kind == "luks2") {
			l = append(l, kind)
		}
	}
	return l
}

// makeFixtures makes every fixture ops need, two at a time.
func (k *killCampaign) makeFixtures(ops []*killOp) {
	var kinds []string
	for _, op := range ops {
		for _, kind := range k.kindsOf(op) {
			if !contains(kinds, kind) {
				kinds = append(kinds, kind)
			}
		}
	}
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, kind := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			_, errs[i] = k.fixture(kind)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			k.t.Fatalf("making the %s fixture: %v", kinds[i], err)
		}
	}
}

type opStats struct {
	kills, late, calib int
	byWrites           int            // kills at a write call
	found              map[string]int // cases with each finding
}

func newKillCampaign(t *testing.T, seed int64) *killCampaign {
	dir := t.TempDir()
	t.Cleanup(func() {
		keep.RemoveKeyring(harnessKeyring())
		cleanupMounts(t, dir, filepath.Join(dir, "run"))
	})
	return &killCampaign{t: t, seed: seed, dir: dir, mk: newMarker(rand.New(rand.NewSource(seed))),
		tpls: map[string]*fixture{}, unmeasured: map[string]bool{}, durs: map[string][]time.Duration{}, writes: map[string][]int64{}, byOp: map[string]*opStats{}}
}

func (k *killCampaign) stats(op string) *opStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	s := k.byOp[op]
	if s == nil {
		s = &opStats{found: map[string]int{}}
		k.byOp[op] = s
	}
	return s
}

// pickPoint draws a kill point uniformly over the command's measured run
// (mode "time": the median duration of its last five runs to the end) or
// over its write calls (mode "writes": the median of their counts).
func (k *killCampaign) pickPoint(op *killOp, mode string) (killPoint, bool) {
	k.mu.Lock()
	d := append([]time.Duration(nil), k.durs[op.name]...)
	w := append([]int64(nil), k.writes[op.name]...)
	k.next++
	r := rand.New(rand.NewSource(k.seed*31 + int64(k.next)))
	k.mu.Unlock()
	if len(d) == 0 {
		k.mu.Lock()
		if !k.unmeasured[op.name] {
			k.t.Errorf("%s: never ran to its end, so there is no run to kill it in", op.name)
		}
		k.unmeasured[op.name] = true
		k.mu.Unlock()
		return killPoint{}, false
	}
	if mode == "writes" {
		w = w[max(0, len(w)-5):]
		sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
		if m := w[len(w)/2]; m > 0 {
			return killPoint{delay: -1, writes: 1 + r.Int63n(m)}, true
		}
	}
	d = d[max(0, len(d)-5):]
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return killPoint{delay: time.Duration(r.Int63n(int64(d[len(d)/2]) + 1))}, true
}

// runJobs runs jobs on the workers and tallies what they found.
func (k *killCampaign) runJobs(jobs []killJob) {
	k.mu.Lock()
	for i := range jobs {
		jobs[i].index = k.workSq
		k.workSq++
	}
	k.mu.Unlock()
	ch := make(chan killJob)
	var wg sync.WaitGroup
	for w := 0; w < max(1, *killWorkers); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				c := k.runCase(j.op, "", j.index, j.point, j.count)
				k.tally(c)
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
}

// replay runs one case (OP:CASE:DELAY) again, repeat times.
func (k *killCampaign) replay(spec string, repeat int) {
	parts := strings.Split(spec, ":")
	if len(parts) != 3 {
		k.t.Fatalf("-kill.replay %q: want OP/FIXTURE:CASE:DELAY", spec)
	}
	name, kind, _ := strings.Cut(parts[0], "/")
	op := findKillOp(name)
	idx, err := strconv.Atoi(parts[1])
	point, perr := parseKillPoint(parts[2])
	if op == nil || err != nil || perr != nil || (kind != "" && !contains(op.kinds, kind)) {
		k.t.Fatalf("-kill.replay %q: want OP/FIXTURE:CASE:POINT (e.g. mv-force/vc16:17:41.2ms or put/vc12:3:w120)", spec)
	}
	if _, err := k.fixture(kind); kind != "" && err != nil {
		k.t.Fatal(err)
	}
	for i := 0; i < repeat; i++ {
		c := k.runCase(op, kind, idx, point, false)
		k.tally(c)
	}
	k.report([]*killOp{op})
}

// tally adds a case's findings to the counts and logs its failures.
func (k *killCampaign) tally(c *killCase) {
	s := k.stats(c.op.name)
	k.mu.Lock()
	defer k.mu.Unlock()
	ok := c.res.code == 0 && !c.res.timedOut && len(c.found[fUnkilled]) == 0
	switch {
	case c.count:
		if ok {
			k.writes[c.op.name] = append(k.writes[c.op.name], c.writes)
		}
	case c.point.none():
		s.calib++
		if ok {
			k.durs[c.op.name] = append(k.durs[c.op.name], c.dur)
			if c.op.mount {
				k.writes[c.op.name] = append(k.writes[c.op.name], c.writes)
			}
		}
	case c.killed:
		s.kills++
		if c.point.writes > 0 {
			s.byWrites++
		}
	default:
		s.late++
	}
	k.done++
	if k.done%100 == 0 {
		k.t.Logf("%d cases run, %d failed", k.done, len(k.fails))
	}
	var fail []string
	for _, cat := range categories {
		if len(c.found[cat]) == 0 {
			continue
		}
		s.found[cat]++
		if failing[cat] {
			fail = append(fail, fmt.Sprintf("  %s: %s", cat, strings.Join(c.found[cat], "; ")))
		} else if s.found[cat] <= 3 {
			// What does not fail the test is shown, a few times.
			k.t.Logf("%s case %d on %s (%s, %s): %s: %s", c.op.name, c.index, c.kind, c.point, c.describe(), cat, strings.Join(c.found[cat], "; "))
		}
	}
	if len(fail) > 0 {
		how := "killed after " + c.point.String()
		if c.point.writes > 0 {
			how = fmt.Sprintf("killed at its write call %d", c.point.writes)
			if c.call != "" {
				how += ", " + c.call + ", not done"
			}
		}
		if !c.killed {
			how = fmt.Sprintf("not killed (ran to its end in %v)", c.dur.Round(time.Microsecond))
		}
		msg := fmt.Sprintf("%s case %d on %s, %s: %s\n%s\n  replay: go test ./cmd/cryptvol -run 'TestKillCampaign$' -v -args -kill.seed=%d -kill.replay=%s/%s:%d:%v -kill.repeat=20",
			c.op.name, c.index, c.kind, how, c.describe(), strings.Join(fail, "\n"), k.seed, c.op.name, c.kind, c.index, c.point)
		if c.kept != "" {
			msg += "\n  kept: " + c.kept
		}
		k.fails = append(k.fails, msg)
		k.t.Error(msg)
	}
}

// report logs the figures: per operation the kills and the cases with
// each finding.
func (k *killCampaign) report(ops []*killOp) {
	var b strings.Builder
	tot := opStats{found: map[string]int{}}
	fmt.Fprintf(&b, "kill campaign, seed %d:\n", k.seed)
	for _, op := range ops {
		s := k.stats(op.name)
		k.mu.Lock()
		d := append([]time.Duration(nil), k.durs[op.name]...)
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		w := append([]int64(nil), k.writes[op.name]...)
		sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
		med, medW := time.Duration(0), int64(0)
		if len(d) > 0 {
			med, medW = d[len(d)/2], w[len(w)/2]
		}
		fmt.Fprintf(&b, "  %-16s %4d kills (%d at a write call; %d came after the end; %d runs to the end, median %v, %d write calls)",
			op.name, s.kills, s.byWrites, s.late, s.calib, med.Round(time.Millisecond), medW)
		var fs []string
		for _, cat := range categories {
			if n := s.found[cat]; n > 0 {
				fs = append(fs, fmt.Sprintf("%s %d", cat, n))
				tot.found[cat] += n
			}
		}
		if len(fs) > 0 {
			fmt.Fprintf(&b, ": %s", strings.Join(fs, ", "))
		}
		b.WriteString("\n")
		tot.kills += s.kills
		tot.late += s.late
		tot.byWrites += s.byWrites
		k.mu.Unlock()
	}
	fmt.Fprintf(&b, "  total: %d kills (%d at a write call; %d more came after the end)\n", tot.kills, tot.byWrites, tot.late)
	for _, cat := range categories {
		fmt.Fprintf(&b, "    %-42s %d cases\n", cat+":", tot.found[cat])
	}
	k.t.Log(b.String())
}

// fixture is a volume or archive made once per campaign, copied for each
// case.
type fixture struct {
	kind            string
	dir             string
	file            string // the volume or archive
	bak             string // a header backup (restore fixtures)
	tree            tree   // what it holds (archive: by member name)
	removed         tree   // archive members removed (archive-holes)
	creds, newCreds []string
	luks            bool
	err             error
	once            sync.Once
}

func (k *killCampaign) fixture(kind string) (*fixture, error) {
	k.tplMu.Lock()
	f := k.tpls[kind]
	if f == nil {
		f = &fixture{kind: kind, dir: filepath.Join(k.dir, "fixtures", kind)}
		k.tpls[kind] = f
	}
	k.tplMu.Unlock()
	f.once.Do(func() { f.err = k.makeFixture(f) })
	return f, f.err
}

// fixtureTree is the files a fixture holds, the same for a given seed.
func (k *killCampaign) fixtureTree(kind string) tree {
	h := fnv.New64a()
	h.Write([]byte(kind))
	rng := rand.New(rand.NewSource(k.seed ^ int64(h.Sum64()>>1)))
	id := uint32(h.Sum64()%1000) * 100
	t := tree{"/docs": {dir: true}, "/docs/deep": {dir: true}, "/photos": {dir: true}}
	add := func(p string, size int) {
		id++
		t[p] = node{data: k.mk.content(rng, id, size)}
	}
	add("/a.txt", 1000+rng.Intn(3000))
	add("/b.bin", 100<<10)
	for i := 1; i <= 5; i++ {
		add(fmt.Sprintf("/docs/n%d.txt", i), 1<<10+rng.Intn(200<<10))
	}
	add("/docs/deep/x.bin", 300<<10)
	for i := 1; i <= 4; i++ {
		add(fmt.Sprintf("/photos/p%d.jpg", i), 50<<10+rng.Intn(450<<10))
	}
	add("/big.bin", 1536<<10)
	return t
}

// derivedFrom: these fixtures are another's with a change made.
var derivedFrom = map[string]string{"vc-restore": "vc12", "luks-restore": "luks1", "archive-holes": "archive"}

func (k *killCampaign) makeFixture(f *fixture) error {
	env := cvEnviron(filepath.Join(k.dir, "run"), filepath.Join(k.dir, "tmp"))
	os.MkdirAll(f.dir, 0o700)
	do := func(args ...string) error {
		if r := cvRunIn(f.dir, env, 2*time.Minute, args...); r.code != 0 {
			return fmt.Errorf("%s: %v", strings.Join(args, " "), r)
		}
		return nil
	}
	if base, ok := derivedFrom[f.kind]; ok {
		b, err := k.fixture(base)
		if err != nil {
			return err
		}
		f.file = filepath.Join(f.dir, filepath.Base(b.file))
		if err := copySparse(b.file, f.file); err != nil {
			return err
		}
		f.tree, f.creds, f.newCreds, f.luks = b.tree.clone(), b.creds, b.newCreds, b.luks
		f.bak = filepath.Join(f.dir, "v.hdr")
		switch f.kind {
		case "vc-restore":
			// The backup opens with the old password; the volume now
			// with the new one.
			if err := do(append([]string{"header", "backup", f.file, f.bak}, f.creds...)...); err != nil {
				return err
			}
			return do(append([]string{"passwd", f.file, "--new-password-file", f.newCreds[1], "--new-pim", "1"}, f.creds...)...)
		case "luks-restore":
			if err := do("header", "backup", f.file, f.bak); err != nil {
				return err
			}
			return do(append([]string{"keyslot", "change", f.file, "--new-password-file", f.newCreds[1], "--pbkdf-force-iterations", "1000"}, f.creds...)...)
		}
		f.bak = ""
		gone := []string{"t/b.bin", "t/docs/n2.txt", "t/photos/p3.jpg"}
		for _, m := range gone {
			delete(f.tree, m)
		}
		return do(append(append([]string{"archive", "rm", f.file}, gone...), f.creds...)...)
	}

	pw, pw2 := filepath.Join(f.dir, "pw"), filepath.Join(f.dir, "pw2")
	os.WriteFile(pw, []byte("kill campaign password\n"), 0o600)
	os.WriteFile(pw2, []byte("the new kill campaign password\n"), 0o600)
	src := filepath.Join(f.dir, "src")
	f.tree = k.fixtureTree(f.kind)
	if err := writeSources(src, f.tree); err != nil {
		return err
	}
	var create []string
	switch f.kind {
	case "vc12":
		create = []string{"--size", "8M"}
	case "vc16":
		create = []string{"--size", "20M", "--filesystem", "fat16"}
	case "vc32":
		create = []string{"--size", "36M", "--filesystem", "fat32"}
	case "vc-exfat":
		create = []string{"--size", "16M", "--filesystem", "exfat"}
	case "vc-ext4":
		create = []string{"--size", "24M", "--filesystem", "ext4"}
	case "luks1":
		create = []string{"--size", "8M", "--type", "luks1"}
	case "luks2":
		create = []string{"--size", "12M", "--type", "luks2", "--offset", "8192"}
	case "archive":
		f.file = filepath.Join(f.dir, "a.cva")
		key := filepath.Join(f.dir, "key")
		kb := make([]byte, 32)
		rand.New(rand.NewSource(k.seed)).Read(kb)
		os.WriteFile(key, kb, 0o600)
		f.creds = []string{"-k", key}
		// Members are named after the relative paths given: "t/docs/...".
		members := tree{"t": {dir: true}}
		for p, n := range f.tree {
			members["t"+p] = n
		}
		os.Rename(src, filepath.Join(f.dir, "t"))
		f.tree = members
		return do(append([]string{"archive", "create", f.file, "t", "-r"}, f.creds...)...)
	default:
		return fmt.Errorf("unknown fixture %s", f.kind)
	}
	f.luks = strings.HasPrefix(f.kind, "luks")
	if f.luks {
		f.file = filepath.Join(f.dir, "v.luks")
		f.creds = []string{"--password-file", pw}
		f.newCreds = []string{"--password-file", pw2}
		create = append(create, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000")
	} else {
		f.file = filepath.Join(f.dir, "v.hc")
		vc := func(pw string) []string {
			return []string{"--password-file", pw, "--pim", "1", "--hash", "SHA-256", "--encryption", "AES"}
		}
		f.creds, f.newCreds = vc(pw), vc(pw2)
	}
	if err := do(append(append([]string{"create", f.file, "--quick", "--non-interactive"}, create...), f.creds...)...); err != nil {
		return err
	}
	var srcs []string
	for _, e := range mustEntries(src) {
		srcs = append(srcs, filepath.Join(src, e))
	}
	return do(append(append([]string{"put", f.file}, append(srcs, "/", "-r")...), f.creds...)...)
}

func mustEntries(dir string) []string {
	ents, _ := os.ReadDir(dir)
	var l []string
	for _, e := range ents {
		l = append(l, e.Name())
	}
	return l
}

// killCase is one run: a copy of a fixture, the command killed (or run to
// its end), the next command, and what was found.
type killCase struct {
	op      *killOp
	index   int
	point   killPoint
	rng     *rand.Rand
	mk      marker
	kind    string
	fx      *fixture
	dir     string // the case's directory (not searched)
	volDir  string // holds the volume or archive (searched)
	file    string // the volume or archive
	srcDir  string // local sources (not searched)
	run     string // runtime directory (searched)
	tmp     string // $TMPDIR (searched)
	env     []string
	ids     uint32
	what    string // what the command does, for the report
	creds   []string
	newCred []string
	rule    credRule

	args    []string // the command killed
	argsDir string   // its working directory
	targets []string // paths (members) the command may change
	alts    []tree   // the states of targets it may leave
	partial bool     // rm -r: any target may be gone (not a parent before its child)
	added   tree     // files that must be there too (fsynced through the mount)
	mayBe   []string // paths that may be there in any state
	nextDir string   // where the next put goes
	// The mount daemon instead of a command.
	mountRun func(c *killCase) (time.Duration, int64, bool)

	res    cvResult
	dur    time.Duration
	writes int64  // write calls seen (of the mount daemon: while the files were written)
	call   string // the call killed at, under killat
	count  bool   // a run that only counts write calls
	killed bool
	found  map[string][]string
	kept   string
}

func (c *killCase) finding(cat, format string, args ...any) {
	c.found[cat] = append(c.found[cat], fmt.Sprintf(format, args...))
}

func (c *killCase) describe() string {
	s := c.what
	if c.args != nil {
		s += " (cryptvol " + strings.Join(c.args, " ") + ")"
	}
	return s
}

// newFile returns marked data of a size in [lo, hi) and its local path.
func (c *killCase) newFile(name string, lo, hi int) ([]byte, string) {
	c.ids++
	data := c.mk.content(c.rng, 10000+uint32(c.index)*16+c.ids, lo+c.rng.Intn(hi-lo))
	p := filepath.Join(c.srcDir, name)
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, data, 0o600)
	return data, p
}

// files returns the fixture's files (not directories), sorted.
func (c *killCase) files() []string {
	var l []string
	for p, n := range c.fx.tree {
		if !n.dir {
			l = append(l, p)
		}
	}
	sort.Strings(l)
	return l
}

func (c *killCase) pick(l []string) string { return l[c.rng.Intn(len(l))] }

// states is every combination of each of paths being as before or as in
// after (nil: absent) -- for commands whose targets change one by one.
func states(before tree, paths []string, after func(p string) (node, bool)) []tree {
	alts := []tree{{}}
	for _, p := range paths {
		var next []tree
		for _, a := range alts {
			old := a.clone()
			if n, ok := before[p]; ok {
				old[p] = n
			}
			next = append(next, old)
			nw := a.clone()
			if n, ok := after(p); ok {
				nw[p] = n
			}
			next = append(next, nw)
		}
		alts = next
	}
	return alts
}

func preparePut(c *killCase) {
	dirs := []string{"/", "/docs", "/docs/deep", "/photos"}
	switch n := c.rng.Intn(4); {
	case n == 0: // replace an existing file
		p := c.pick(c.files())
		data, src := c.newFile("new.bin", 256<<10, 2<<20)
		c.what = "put --force over " + p
		c.args = append([]string{"put", c.file, src, p, "--force"}, c.creds...)
		c.targets = []string{p}
		c.alts = []tree{{p: c.fx.tree[p]}, {p: {data: data}}}
		c.nextDir = path.Dir(p)
	case n == 1: // several files into a directory: each is there or not
		d := c.pick(dirs)
		var srcs, ps []string
		datas := map[string][]byte{}
		for i := 0; i < 3; i++ {
			name := fmt.Sprintf("new%d-%d.bin", c.index, i)
			data, src := c.newFile(name, 64<<10, 768<<10)
			srcs = append(srcs, src)
			p := path.Join(d, name)
			ps = append(ps, p)
			datas[p] = data
		}
		c.what = "put of 3 new files into " + d
		c.args = append(append(append([]string{"put", c.file}, srcs...), d), c.creds...)
		c.targets = ps
		c.alts = states(tree{}, ps, func(p string) (node, bool) { return node{data: datas[p]}, true })
		c.nextDir = d
	default:
		d := c.pick(dirs)
		p := path.Join(d, fmt.Sprintf("new%d.bin", c.index))
		data, src := c.newFile("new.bin", 256<<10, 2<<20)
		c.what = "put of new " + p
		c.args = append([]string{"put", c.file, src, p}, c.creds...)
		c.targets = []string{p}
		c.alts = []tree{{}, {p: {data: data}}}
		c.nextDir = d
	}
}

func prepareRm(c *killCase) {
	if c.rng.Intn(3) == 0 {
		d := c.pick([]string{"/docs", "/photos"})
		c.what = "rm -r " + d
		c.args = append([]string{"rm", c.file, d, "-r"}, c.creds...)
		c.targets = c.fx.tree.under(d)
		c.partial = true
		c.nextDir = "/"
		return
	}
	p := c.pick(c.files())
	c.what = "rm " + p
	c.args = append([]string{"rm", c.file, p}, c.creds...)
	c.targets = []string{p}
	c.alts = []tree{{p: c.fx.tree[p]}, {}}
	c.nextDir = path.Dir(p)
}

func prepareMv(c *killCase) {
	if c.rng.Intn(4) == 0 {
		c.what = "mv /photos /docs/deep/photos2 (a directory)"
		c.args = append([]string{"mv", c.file, "/photos", "/docs/deep/photos2"}, c.creds...)
		c.targets = append(c.fx.tree.under("/photos"), "/docs/deep/photos2")
		moved := c.fx.tree.clone()
		moved.move("/photos", "/docs/deep/photos2")
		old, nw := tree{}, tree{}
		for _, p := range c.targets {
			if n, ok := c.fx.tree[p]; ok {
				old[p] = n
			}
			if n, ok := moved[p]; ok {
				nw[p] = n
			}
		}
		for _, p := range moved.under("/docs/deep/photos2") {
			nw[p] = moved[p]
			if !contains(c.targets, p) {
				c.targets = append(c.targets, p)
			}
		}
		c.alts = []tree{old, nw}
		c.nextDir = "/docs/deep"
		return
	}
	p := c.pick(c.files())
	q := path.Join(c.pick([]string{"/", "/docs", "/photos", "/docs/deep"}), fmt.Sprintf("moved%d.bin", c.index))
	c.what = "mv " + p + " " + q
	c.args = append([]string{"mv", c.file, p, q}, c.creds...)
	c.targets = []string{p, q}
	c.alts = []tree{{p: c.fx.tree[p]}, {q: c.fx.tree[p]}}
	c.nextDir = path.Dir(q)
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func prepareMvForce(c *killCase) {
	fs := c.files()
	p := c.pick(fs)
	q := c.pick(fs)
	for q == p {
		q = c.pick(fs)
	}
	c.what = "mv --force " + p + " " + q
	c.args = append([]string{"mv", c.file, p, q, "--force"}, c.creds...)
	c.targets = []string{p, q}
	c.alts = []tree{{p: c.fx.tree[p], q: c.fx.tree[q]}, {q: c.fx.tree[p]}}
	c.nextDir = path.Dir(q)
}

func preparePasswd(c *killCase) {
	c.what = "passwd"
	c.args = append([]string{"passwd", c.file, "--new-password-file", c.fx.newCreds[1], "--new-pim", "1"}, c.creds...)
	c.rule = oldOrNew
	c.nextDir = "/docs"
}

func prepareKeyslotAdd(c *killCase) {
	c.what = "keyslot add (" + c.kind + ")"
	c.args = append([]string{"keyslot", "add", c.file, "--new-password-file", c.fx.newCreds[1], "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"}, c.creds...)
	c.rule = oldAndMaybe
	c.nextDir = "/docs"
}

func prepareKeyslotChange(c *killCase) {
	c.what = "keyslot change (" + c.kind + ")"
	c.args = append([]string{"keyslot", "change", c.file, "--new-password-file", c.fx.newCreds[1], "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"}, c.creds...)
	c.rule = oldOrNew
	c.nextDir = "/docs"
}

// prepareRestore: the fixture's backup opens with the old credentials,
// the volume with the new ones; the restore brings the old ones back.
func prepareRestore(c *killCase) {
	c.what = "header restore of a backup made before a password change (" + c.kind + ")"
	bak := filepath.Join(c.volDir, filepath.Base(c.fx.bak))
	copySparse(c.fx.bak, bak)
	c.args = []string{"header", "restore", c.file, bak}
	if !c.fx.luks {
		c.args = append(c.args, c.fx.creds...)
	}
	c.creds, c.newCred = c.fx.newCreds, c.fx.creds
	c.rule = oldOrNew
	c.nextDir = "/"
}

func prepareFormat(c *killCase) {
	c.what = "format --force"
	c.args = append([]string{"format", c.file, "--filesystem", "fat", "--force"}, c.creds...)
	c.targets = sortedKeys(c.fx.tree)
	c.alts = []tree{c.fx.tree.clone(), {}}
	c.nextDir = "/"
}

func prepareArchiveAdd(c *killCase) {
	var names []string
	datas := map[string][]byte{}
	for i := 0; i < 3; i++ {
		name := fmt.Sprintf("add/f%d-%d.bin", c.index, i)
		data, _ := c.newFile(name, 16<<10, 1<<20)
		names = append(names, name)
		datas[name] = data
	}
	c.what = "archive add of 3 files"
	c.args = append(append([]string{"archive", "add", c.file}, names...), c.creds...)
	c.argsDir = c.srcDir
	c.targets = names
	all := tree{}
	for _, n := range names {
		all[n] = node{data: datas[n]}
	}
	c.alts = []tree{{}, all} // one commit: all or none
}

func prepareArchiveCompact(c *killCase) {
	c.what = "archive compact"
	c.args = append([]string{"archive", "compact", c.file}, c.creds...)
}

// prepareMountKill: the volume is mounted (not killed), files are written and
// fsynced through the mount, and the daemon is killed part-way.
func prepareMountKill(c *killCase) {
	c.what = "the mount daemon, while files are written and fsynced through the mount"
	c.nextDir = "/"
	c.mountRun = runMountCase
}

// runCase runs one case of op: fixture, command, kill, next command,
// checks.
func (k *killCampaign) runCase(op *killOp, kind string, index int, point killPoint, count bool) *killCase {
	rng := rand.New(rand.NewSource(k.seed + int64(index)*1_000_003))
	c := &killCase{op: op, index: index, point: point, count: count, rng: rng, mk: k.mk, found: map[string][]string{}}
	kinds := k.kindsOf(op)
	c.kind = kinds[rng.Intn(len(kinds))]
	if kind != "" {
		c.kind = kind
	}
	fx, err := k.fixture(c.kind)
	if err != nil {
		c.finding(fUnkilled, "making the %s fixture: %v", c.kind, err)
		return c
	}
	c.fx = fx
	c.dir = filepath.Join(k.dir, "cases", fmt.Sprint(index))
	c.volDir, c.srcDir = filepath.Join(c.dir, "vol"), filepath.Join(c.dir, "src")
	c.run, c.tmp = filepath.Join(c.dir, "run"), filepath.Join(c.dir, "tmp")
	for _, d := range []string{c.volDir, c.srcDir} {
		os.MkdirAll(d, 0o700)
	}
	c.env = cvEnviron(c.run, c.tmp)
	c.file = filepath.Join(c.volDir, filepath.Base(c.fx.file))
	if err := copySparse(c.fx.file, c.file); err != nil {
		k.t.Fatal(err)
	}
	c.creds, c.newCred = c.fx.creds, c.fx.newCreds
	op.prepare(c)
	defer func() {
		cleanupMounts(k.t, c.dir, c.run)
		failed := false
		for cat, l := range c.found {
			if failing[cat] && len(l) > 0 {
				failed = true
			}
		}
		if failed && *killKeep != "" {
			c.kept = filepath.Join(*killKeep, fmt.Sprintf("%s-%d", op.name, index))
			os.MkdirAll(*killKeep, 0o700)
			if out, err := exec.Command("cp", "-a", c.dir, c.kept).CombinedOutput(); err != nil {
				c.kept = fmt.Sprintf("(not kept: %v %s)", err, out)
			} else {
				// With the fixture: its password files and the original.
				exec.Command("cp", "-a", c.fx.dir, filepath.Join(c.kept, "fixture")).Run()
			}
		}
		os.RemoveAll(c.dir)
	}()

	if c.mountRun != nil {
		c.dur, c.writes, c.killed = c.mountRun(c)
	} else {
		traced := (c.count || c.point.writes > 0) && killAtSupported() == nil
		c.res, c.killed, c.writes, c.call = runKillable(c.argsDir, c.env, c.point, c.args, traced)
		c.dur = c.res.dur
		if !c.killed && (c.res.code != 0 || c.res.timedOut) {
			c.finding(fUnkilled, "%v", c.res)
		}
		if c.count {
			return c
		}
	}
	if c.fx.tree != nil && strings.HasPrefix(c.kind, "archive") {
		c.checkArchive()
	} else {
		c.checkVolume()
	}
	return c
}

// runKillable runs cryptvol args and kills it with SIGKILL at p; killed
// says whether the signal ended it, writes how many write calls it was
// seen to make. Traced, it runs under killat, which kills on entering the
// p.writes-th call that changes a file (call names it) and counts those
// calls exactly; otherwise /proc/PID/io is polled.
func runKillable(dir string, env []string, p killPoint, args []string, traced bool) (r cvResult, killed bool, writes int64, call string) {
	r, killed, writes, call, _ = runKillableTrace(dir, env, p, args, traced)
	return r, killed, writes, call
}

// runKillableTrace is runKillable that also returns, for a traced run to
// the end, killat's trace of the file-changing calls.
func runKillableTrace(dir string, env []string, p killPoint, args []string, traced bool) (r cvResult, killed bool, writes int64, call string, trace []string) {
	var report string
	name := cvBin()
	if traced {
		f, err := os.CreateTemp("", "killat-*.json")
		if err != nil {
			return cvResult{code: -1, out: err.Error()}, false, 0, "", nil
		}
		f.Close()
		report = f.Name()
		defer os.Remove(report)
		args = append([]string{strconv.FormatInt(max(p.writes, 0), 10), report, name}, args...)
		name = "killat"
	}
	cmd := exec.Command(name, args...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return cvResult{code: -1, out: err.Error()}, false, 0, "", nil
	}
	var timers []*time.Timer
	if p.delay >= 0 {
		timers = append(timers, time.AfterFunc(p.delay, func() { cmd.Process.Signal(syscall.SIGKILL) }))
	}
	limit := time.AfterFunc(2*time.Minute, func() { cmd.Process.Signal(syscall.SIGKILL) })
	stop, watched := make(chan struct{}), make(chan int64, 1)
	if traced {
		watched <- 0
	} else {
		go func() { watched <- watchWrites(cmd.Process.Pid, 0, p.writes, stop) }()
	}
	err := cmd.Wait()
	r = cvResult{out: out.String(), dur: time.Since(start)}
	close(stop)
	writes = <-watched
	limit.Stop()
	for _, tm := range timers {
		tm.Stop()
	}
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err != nil {
		r.code = cmd.ProcessState.ExitCode()
	}
	if r.dur >= 2*time.Minute {
		r.timedOut = true
		return r, false, writes, "", nil
	}
	if traced {
		var rep killAtReport
		b, err := os.ReadFile(report)
		if err == nil {
			err = json.Unmarshal(b, &rep)
		}
		if err != nil {
			r.code, r.out = -1, fmt.Sprintf("killat left no report (%v): %s", err, r.out)
			return r, false, 0, "", nil
		}
		return r, rep.Killed, rep.Calls, rep.Call, rep.Trace
	}
	return r, ws.Signaled() && ws.Signal() == syscall.SIGKILL, writes, "", nil
}

// watchWrites polls pid's count of write system calls (syscw in
// /proc/PID/io: write, pwrite and the like, of all its threads) until
// stop is closed, kills pid with SIGKILL once the count has grown by
// target (> 0) from base, and returns the count seen last, less base.
func watchWrites(pid int, base, target int64, stop <-chan struct{}) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	var seen int64
	buf := make([]byte, 512)
	for {
		select {
		case <-stop:
			return seen
		default:
		}
		if n, err := f.ReadAt(buf, 0); n > 0 && (err == nil || err == io.EOF) {
			if i := bytes.Index(buf[:n], []byte("syscw: ")); i >= 0 {
				line := buf[i+7 : n]
				if j := bytes.IndexByte(line, '\n'); j >= 0 {
					line = line[:j]
				}
				if w, err := strconv.ParseInt(string(line), 10, 64); err == nil && w-base > seen {
					seen = w - base
				}
			}
		}
		if target > 0 && seen >= target {
			syscall.Kill(pid, syscall.SIGKILL)
			<-stop
			return seen
		}
		if target <= 0 {
			// Only counting: a coarser look leaves the cores to the
			// command.
			time.Sleep(200 * time.Microsecond)
		}
	}
}

// syscw reads pid's count of write calls now.
func syscw(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0
	}
	if i := bytes.Index(b, []byte("syscw: ")); i >= 0 {
		line := b[i+7:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		w, _ := strconv.ParseInt(string(line), 10, 64)
		return w
	}
	return 0
}

// opens reports whether the volume opens with creds (cryptvol info).
func (c *killCase) opens(creds []string) (bool, cvResult) {
	r := cvRun(c.env, 2*time.Minute, append([]string{"info", c.file}, creds...)...)
	return r.code == 0, r
}

// checkVolume runs the next command on the volume and checks it.
func (c *killCase) checkVolume() {
	// The next ordinary command: a put into the directory it worked in,
	// with the old credentials, or the new ones if only those open it.
	nextData, nextSrc := c.newFile("next.bin", 1<<10, 64<<10)
	nextPath := path.Join(c.nextDir, fmt.Sprintf("next%d.bin", c.index))
	put := func(creds []string) cvResult {
		return cvRun(c.env, 2*time.Minute, append([]string{"put", c.file, nextSrc, nextPath}, creds...)...)
	}
	creds := c.creds
	r := put(creds)
	if r.code == exitAuth && c.rule == oldOrNew {
		creds = c.newCred
		if r2 := put(creds); r2.code != exitAuth {
			r = r2
		} else {
			c.finding(fNoOpen, "it opens with neither the old nor the new credentials: %v; %v", r, r2)
			c.findPlaintext()
			return
		}
	}
	if r.code == exitAuth {
		c.finding(fNoOpen, "the old credentials no longer open it: %v", r)
		c.findPlaintext()
		return
	}
	if r.code == exitDamaged && c.op.name == "format" && c.killed && (strings.Contains(r.out, "holds no FAT filesystem") || strings.Contains(r.out, "holds no filesystem cryptvol recognises")) {
		// format drops the old filesystem's signature first and writes
		// the new one's last (fsformat_order.go), so that a killed
		// format leaves no filesystem rather than a damaged one; its
		// files were to go. Nothing else to check.
		c.finding(fNoFS, "%s", oneLine(r.out))
		c.findPlaintext()
		return
	}
	if r.code != 0 {
		c.finding(fNextFailed, "cryptvol put %s: %v", nextPath, r)
	}
	if strings.Contains(r.out, "opened with the backup header") {
		// One header copy has the old credentials, the other the new.
		c.finding(fBackupHdr, "%s", oneLine(r.out))
	}
	if !c.killed && c.rule != oldOnly {
		if ok, r := c.opens(c.newCred); !ok {
			c.finding(fUnkilled, "the command ended but the new credentials do not open the volume: %v", r)
		}
	}

	img := filepath.Join(c.dir, "check", "plain.img")
	os.MkdirAll(filepath.Dir(img), 0o700)
	defer os.Remove(img)
	if r := cvRun(c.env, 2*time.Minute, append([]string{"export", c.file, img}, creds...)...); r.code != 0 {
		c.finding(fNextFailed, "cryptvol export: %v", r)
		c.findPlaintext()
		return
	}
	v := fsckBoth(c.env, c.file, img, creds)
	if v.tool == "e2fsck" && v.fatCode != 0 {
		// ext4's journal makes every change all or nothing: after the
		// next command replayed it, e2fsck -fn finds nothing.
		c.finding(fExt4Fsck, "%s", oneLine(v.String()))
	}
	if v.fatCross > 0 {
		c.finding(fCrossFat, "%d: %s", v.fatCross, oneLine(v.fatOut))
	}
	if v.ourCross > 0 {
		c.finding(fCrossOurs, "%d: %s", v.ourCross, oneLine(v.ourOut))
	}
	if v.fatCross == 0 && v.ourCross == 0 && !v.clean() && v.tool != "e2fsck" {
		c.finding(fFsckOther, "%s", oneLine(v.String()))
	}
	got, err := readTree(img)
	if err != nil {
		c.finding(fLost, "the filesystem cannot be read: %v", err)
		c.findPlaintext()
		return
	}
	want := tree{}
	for p, n := range c.fx.tree {
		if !contains(c.targets, p) {
			want[p] = n
		}
	}
	for p, n := range c.added {
		want[p] = n
	}
	want[nextPath] = node{data: nextData}
	c.compare(want, got, nextPath)
	for p := range got {
		if isTemp(p) {
			if path.Dir(p) == c.nextDir {
				c.finding(fLeftover, "%s is still in the volume after the next put into %s", p, c.nextDir)
			} else {
				c.finding(fTempElse, "%s", p)
			}
		}
	}
	c.findPlaintext()
}

// compare checks got against want (the untouched files), the targets
// against the states the command may leave, and that nothing else is
// there.
func (c *killCase) compare(want, got tree, next string) {
	for _, p := range sortedKeys(want) {
		w := want[p]
		g, ok := got[p]
		cat := fLost
		if p == next {
			cat = fNextFailed
		}
		switch {
		case !ok:
			c.finding(cat, "%s is gone", p)
		case g.dir != w.dir || !bytes.Equal(g.data, w.data):
			c.finding(cat, "%s changed (%d bytes, had %d)", p, len(g.data), len(w.data))
		}
	}
	tg := tree{}
	for _, p := range c.targets {
		if n, ok := got[p]; ok {
			tg[p] = n
		}
	}
	switch {
	case c.partial:
		for p, n := range tg {
			if o := c.fx.tree[p]; o.dir != n.dir || !bytes.Equal(o.data, n.data) {
				c.finding(fTorn, "%s changed (%d bytes, had %d)", p, len(n.data), len(o.data))
			}
			if d := path.Dir(p); d != "/" && contains(c.targets, d) {
				if _, ok := tg[d]; !ok {
					c.finding(fTorn, "%s is there without its directory", p)
				}
			}
		}
	case c.alts != nil:
		ok := false
		for _, a := range c.alts {
			if len(diff(a, tg, 1)) == 0 {
				ok = true
				break
			}
		}
		if !ok {
			c.finding(fTorn, "%s", describeState(c.targets, tg, c.fx.tree))
		}
		if !c.killed && len(diff(c.alts[len(c.alts)-1], tg, 1)) != 0 {
			c.finding(fUnkilled, "the command ended but left %s", describeState(c.targets, tg, c.fx.tree))
		}
	}
	for _, p := range sortedKeys(got) {
		if _, ok := want[p]; ok || contains(c.targets, p) || contains(c.mayBe, p) || isTemp(p) {
			continue
		}
		c.finding(fUnexpected, "%s (%d bytes)", p, len(got[p].data))
	}
}

// describeState says what is at each target path.
func describeState(paths []string, got, before tree) string {
	var l []string
	for _, p := range paths {
		n, ok := got[p]
		switch {
		case !ok:
			l = append(l, p+" absent")
		case n.dir:
			l = append(l, p+" a directory")
		default:
			s := fmt.Sprintf("%s %d bytes", p, len(n.data))
			for q, o := range before {
				if !o.dir && len(o.data) > 0 && bytes.Equal(o.data, n.data) {
					s += " (= the old " + q + ")"
				}
			}
			l = append(l, s)
		}
	}
	return strings.Join(l, ", ")
}

func sortedKeys(t tree) []string {
	l := make([]string, 0, len(t))
	for k := range t {
		l = append(l, k)
	}
	sort.Strings(l)
	return l
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return s
}

// findPlaintext searches the volume's directory, $TMPDIR and the runtime
// directory for decrypted data of the files inside, and the volume's
// directory for files the next command should have removed.
func (c *killCase) findPlaintext() {
	for _, f := range c.mk.find(c.volDir, c.tmp, c.run) {
		c.finding(fPlaintext, "%s", f)
	}
	for _, e := range mustEntries(c.volDir) {
		p := filepath.Join(c.volDir, e)
		if p != c.file && e != filepath.Base(c.fx.bak) {
			c.finding(fLeftover, "%s beside the %s", e, filepath.Base(c.file))
		}
	}
}

// checkArchive runs the next command on the archive (an add) and checks
// that every member is there and intact.
func (c *killCase) checkArchive() {
	nextData, _ := c.newFile("next/n.bin", 1<<10, 64<<10)
	if r := cvRunIn(c.srcDir, c.env, 2*time.Minute, append([]string{"archive", "add", c.file, "next/n.bin"}, c.creds...)...); r.code != 0 {
		c.finding(fNextFailed, "cryptvol archive add: %v", r)
	}
	if r := cvRun(c.env, 2*time.Minute, append([]string{"archive", "verify", c.file}, c.creds...)...); r.code != 0 {
		c.finding(fArchLost, "cryptvol archive verify: %v", r)
	}
	out := filepath.Join(c.dir, "out")
	defer os.RemoveAll(out)
	if r := cvRun(c.env, 2*time.Minute, append([]string{"archive", "get", c.file, "-C", out}, c.creds...)...); r.code != 0 {
		c.finding(fArchLost, "cryptvol archive get: %v", r)
	}
	got := tree{}
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == out {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, out+string(filepath.Separator)))
		if d.IsDir() {
			got[rel] = node{dir: true}
			return nil
		}
		b, _ := os.ReadFile(p)
		got[rel] = node{data: b}
		return nil
	})
	want := tree{"next/n.bin": {data: nextData}, "next": {dir: true}}
	for p, n := range c.fx.tree {
		want[strings.TrimPrefix(p, "/")] = n
	}
	for _, p := range c.targets {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			c.mayBe = append(c.mayBe, d)
		}
	}
	// Directory members: the archive keeps them with their files.
	for p, n := range want {
		if n.dir {
			delete(want, p)
			c.mayBe = append(c.mayBe, p)
		}
	}
	for p := range got {
		if got[p].dir {
			if _, ok := want[p]; !ok {
				c.mayBe = append(c.mayBe, p)
			}
		}
	}
	before := len(c.found[fLost])
	c.compare(want, got, "next/n.bin")
	// In an archive, a lost member is a lost intact member.
	if l := c.found[fLost]; len(l) > before {
		c.found[fArchLost] = append(c.found[fArchLost], l[before:]...)
		c.found[fLost] = l[:before]
		if len(c.found[fLost]) == 0 {
			delete(c.found, fLost)
		}
	}
	c.findPlaintext()
}

// runMountCase mounts the volume, writes and fsyncs files through the
// mount and kills the daemon at the case's kill point, counted from the
// start of the writing (or, runToEnd, unmounts when the writing is done);
// it returns how long the writing took, the daemon's write calls meanwhile
// and whether the daemon was killed. The files whose fsync returned must
// be there.
func runMountCase(c *killCase) (time.Duration, int64, bool) {
	mnt := filepath.Join(c.dir, "mnt")
	os.Mkdir(mnt, 0o755)
	c.args = append([]string{"mount", c.file, mnt}, c.creds...)
	if r := cvRun(c.env, 2*time.Minute, c.args...); r.code != 0 {
		c.finding(fUnkilled, "cryptvol mount: %v", r)
		return 0, 0, false
	}
	es, err := mount.Table{Dir: c.run}.Entries()
	if err != nil || len(es) != 1 {
		c.finding(fUnkilled, "mount table: %+v, %v", es, err)
		return 0, 0, false
	}
	pid := es[0].PID
	root, err := os.OpenRoot(mnt)
	if err != nil {
		c.finding(fUnkilled, "%v", err)
		return 0, 0, false
	}
	defer root.Close()
	c.added = tree{}
	var written []string
	start := time.Now()
	var timer *time.Timer
	var fired atomic.Bool
	if c.point.delay >= 0 {
		timer = time.AfterFunc(c.point.delay, func() {
			fired.Store(true)
			syscall.Kill(pid, syscall.SIGKILL)
		})
	}
	// The daemon's write calls while the files are written.
	stop, watched := make(chan struct{}), make(chan int64)
	go func() { watched <- watchWrites(pid, syscw(pid), c.point.writes, stop) }()
	dirs := []string{"", "docs", "photos"}
	var werr error
	for i := 0; i < 12 && werr == nil; i++ {
		name := path.Join(dirs[i%len(dirs)], fmt.Sprintf("m%d-%d.bin", c.index, i))
		data, _ := c.newFile("m.bin", 32<<10, 300<<10)
		written = append(written, "/"+name)
		f, err := root.Create(name)
		if err != nil {
			werr = err
			break
		}
		for off := 0; off < len(data) && err == nil; off += 64 << 10 {
			_, err = f.Write(data[off:min(off+64<<10, len(data))])
		}
		if err == nil {
			err = f.Sync()
		}
		if err == nil {
			c.added["/"+name] = node{data: data}
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		werr = err
	}
	dur := time.Since(start)
	if timer != nil {
		timer.Stop()
	}
	close(stop)
	writes := <-watched
	killed := fired.Load() || (c.point.writes > 0 && writes >= c.point.writes)
	if killed {
		for i := 0; i < 500 && mount.ProcessAlive(pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if !killed && werr != nil {
		c.finding(fUnkilled, "writing through the mount: %v", werr)
	}
	for _, p := range written {
		if _, ok := c.added[p]; !ok {
			c.mayBe = append(c.mayBe, p)
		}
	}
	root.Close()
	// The next ordinary commands: unmount (of a dead mount, after a kill),
	// then the put checkVolume does.
	if r := cvRun(c.env, time.Minute, "unmount", mnt); r.code != 0 {
		c.finding(fNextFailed, "cryptvol unmount: %v", r)
	}
	if _, ok := mount.IsMountPoint(mnt); ok {
		c.finding(fNextFailed, "%s is still mounted after cryptvol unmount", mnt)
		mount.Unmount(mnt, true)
	}
	for i := 0; i < 500 && mount.ProcessAlive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	c.args = nil
	return dur, writes, killed
}
