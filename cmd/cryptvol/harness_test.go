//go:build unix

package main

// Pieces shared by the torture test (torture_test.go) and the kill -9
// campaign (killcampaign_test.go): running the cryptvol under test with a
// time limit, reading what a volume holds through `cryptvol export`,
// judging it with fsck.fat and `cryptvol fsck`, and file contents that
// carry a mark, so that decrypted copies left on disk can be found.

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
)

// cvBin is the cryptvol the harnesses run: $CRYPTVOL_TEST_BIN (a binary
// built with `go build ./cmd/cryptvol`) or else the test binary itself,
// which TestMain puts on PATH as `cryptvol` (the same run() as main).
func cvBin() string {
	if b := os.Getenv("CRYPTVOL_TEST_BIN"); b != "" {
		return b
	}
	return "cryptvol"
}

// cvResult is how one cryptvol process ended.
type cvResult struct {
	code     int // exit code; -1 when killed by a signal
	out      string
	dur      time.Duration
	timedOut bool
}

// cvRun runs cryptvol with args in env, killed after limit (a hung
// command is a finding, never a hung test).
func cvRun(env []string, limit time.Duration, args ...string) cvResult {
	return cvRunIn("", env, limit, args...)
}

// cvRunIn is cvRun in the working directory dir.
func cvRunIn(dir string, env []string, limit time.Duration, args ...string) cvResult {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, cvBin(), args...)
	cmd.Env, cmd.Dir = env, dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := cvResult{out: out.String(), dur: time.Since(start), timedOut: ctx.Err() != nil}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		r.code, r.out = -1, fmt.Sprintf("%v\n%s", err, r.out)
	}
	return r
}

func (r cvResult) String() string {
	s := fmt.Sprintf("exit %d after %v", r.code, r.dur.Round(time.Millisecond))
	if r.timedOut {
		s += " (killed: time limit)"
	}
	if o := strings.TrimSpace(r.out); o != "" {
		s += ": " + o
	}
	return s
}

// cvEnviron is the environment of one harness's cryptvol processes: lock
// and mount records in run, temporary files in tmp (so they can be
// searched), and a key store of their own.
func cvEnviron(run, tmp string) []string {
	os.MkdirAll(run, 0o700)
	os.MkdirAll(tmp, 0o700)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, "CRYPTVOL_") {
			env = append(env, kv)
		}
	}
	return append(env, "CRYPTVOL_RUNTIME_DIR="+run, "TMPDIR="+tmp, "CRYPTVOL_KEYRING="+harnessKeyring())
}

// harnessKeyring is the (never created: nothing is unlocked) key store
// name of the harnesses' processes, so they never see the user's.
func harnessKeyring() string { return fmt.Sprintf("cryptvol-harness-%d", os.Getpid()) }

// node is one entry of a filesystem tree: a directory, or a file's data.
type node struct {
	dir  bool
	data []byte
}

// tree maps the paths of a filesystem ("/a/b", the root left out) to what
// is there.
type tree map[string]node

func (t tree) clone() tree {
	c := make(tree, len(t))
	for k, v := range t {
		c[k] = v
	}
	return c
}

// under returns the paths at or below p.
func (t tree) under(p string) []string {
	var out []string
	for k := range t {
		if k == p || strings.HasPrefix(k, p+"/") {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// move renames p and everything below it to q.
func (t tree) move(p, q string) {
	for _, k := range t.under(p) {
		n := t[k]
		delete(t, k)
		t[q+strings.TrimPrefix(k, p)] = n
	}
}

// isTemp tells a temporary name of cryptvol's (put's, inside a volume).
func isTemp(p string) bool { return strings.Contains(path.Base(p), ".cryptvol-") }

// diff lists how got differs from want, at most max lines (temporary
// entries are left to the caller).
func diff(want, got tree, max int) []string {
	var out []string
	keys := make([]string, 0, len(want)+len(got))
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		w, inW := want[k]
		g, inG := got[k]
		var d string
		switch {
		case !inG:
			d = "missing " + k
		case !inW:
			if isTemp(k) {
				continue
			}
			d = "unexpected " + k
		case w.dir != g.dir:
			d = fmt.Sprintf("%s: directory %v, want %v", k, g.dir, w.dir)
		case !bytes.Equal(w.data, g.data):
			d = fmt.Sprintf("%s: %d bytes, not the %d expected", k, len(g.data), len(w.data))
		default:
			continue
		}
		if len(out) == max {
			out = append(out, "...")
			break
		}
		out = append(out, d)
	}
	return out
}

// readTree reads every directory and file of the FAT image img.
func readTree(img string) (tree, error) {
	f, err := os.Open(img)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	fsys, err := filesystem.Open(f, fi.Size(), filesystem.Options{})
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	t := tree{}
	var walk func(dir string) error
	walk = func(dir string) error {
		ents, err := fsys.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := path.Join(dir, e.Name())
			if dir == "/" && e.Name() == "lost+found" && fsys.Type() == "ext4" {
				continue // mkfs.ext4's, not a file of the tree
			}
			if e.IsDir() {
				t[p] = node{dir: true}
				if err := walk(p); err != nil {
					return err
				}
				continue
			}
			r, err := fsys.Open(p)
			if err != nil {
				return err
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				return err
			}
			t[p] = node{data: b}
		}
		return nil
	}
	return t, walk("/")
}

// fsckVerdict is what the filesystem's own checker (fsck.fat -n,
// fsck.exfat -n or e2fsck -fn, on the exported image) and cryptvol fsck
// (on the volume) said. The fat* fields are the own checker's, whichever
// it is.
type fsckVerdict struct {
	tool               string
	fatCode, ourCode   int
	fatOut, ourOut     string
	fatCross, ourCross int // cross-links each reported
	fatMissing         bool
}

var (
	// fsck.fat: "/A and\n/B\n  share clusters."
	fatShare = regexp.MustCompile(`share clusters`)
	ourCross = regexp.MustCompile(`(?m)^cross-linked: `)
)

// clean reports whether both found nothing at all (cryptvol's warnings,
// about how the volume was opened, are not findings).
func (v fsckVerdict) clean() bool {
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(v.ourOut), "\n") {
		if !strings.HasPrefix(l, "cryptvol: warning: ") {
			n++
		}
	}
	return v.fatCode == 0 && v.ourCode == 0 && (n == 1 || v.tool == "e2fsck")
}

func (v fsckVerdict) String() string {
	return fmt.Sprintf("%s: exit %d\n%s\ncryptvol fsck: exit %d\n%s", v.tool, v.fatCode, strings.TrimSpace(v.fatOut), v.ourCode, strings.TrimSpace(v.ourOut))
}

// checkers are the filesystems' own checkers, looking only.
var checkers = map[string][]string{
	"vfat":  {"fsck.fat", "-n"},
	"exfat": {"fsck.exfat", "-n"},
	"ext4":  {"e2fsck", "-fn"},
}

// fsckBoth runs the filesystem's own checker on img and cryptvol fsck on
// vol.
func fsckBoth(env []string, vol, img string, creds []string) fsckVerdict {
	v := fsckVerdict{tool: "fsck.fat"}
	typ := "vfat"
	if f, err := os.Open(img); err == nil {
		if r, err := fsprobe.Probe(f); err == nil {
			typ = r.Type
		}
		f.Close()
	}
	if c, ok := checkers[typ]; ok {
		v.tool = c[0]
	}
	if fsck, err := exec.LookPath(v.tool); err == nil {
		out, err := exec.Command(fsck, append(checkers[typ][1:], img)...).CombinedOutput()
		v.fatOut = string(out)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			v.fatCode = ee.ExitCode()
		} else if err != nil {
			v.fatCode, v.fatOut = -1, err.Error()
		}
		v.fatCross = len(fatShare.FindAllString(v.fatOut, -1))
	} else {
		v.fatMissing = true
	}
	r := cvRun(env, 2*time.Minute, append([]string{"fsck", vol}, creds...)...)
	v.ourCode, v.ourOut = r.code, r.out
	v.ourCross = len(ourCross.FindAllString(r.out, -1))
	return v
}

// marker makes file contents whose every 512-byte block starts with tag
// and the file's number, so a decrypted copy of any part of a file, left
// anywhere, is found by one search for tag, and names its file.
type marker struct{ tag [12]byte }

func newMarker(rng *rand.Rand) marker {
	var m marker
	rng.Read(m.tag[:])
	return m
}

// content returns size bytes of file id.
func (m marker) content(rng *rand.Rand, id uint32, size int) []byte {
	b := make([]byte, size)
	rng.Read(b)
	for off := 0; off+16 <= size; off += 512 {
		copy(b[off:], m.tag[:])
		binary.BigEndian.PutUint32(b[off+12:], id)
	}
	return b
}

// find lists the files below dirs that hold decrypted data: the path and
// the numbers of the files whose marks are in it.
func (m marker) find(dirs ...string) []string {
	var found []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			ids := map[uint32]bool{}
			for off := 0; ; {
				i := bytes.Index(b[off:], m.tag[:])
				if i < 0 {
					break
				}
				off += i + len(m.tag)
				if off+4 <= len(b) {
					ids[binary.BigEndian.Uint32(b[off:])] = true
				}
			}
			if len(ids) > 0 {
				var l []string
				for id := range ids {
					l = append(l, fmt.Sprint(id))
				}
				sort.Strings(l)
				found = append(found, fmt.Sprintf("%s (%d bytes; data of files %s)", p, len(b), strings.Join(l, ",")))
			}
			return nil
		})
	}
	return found
}

// writeSources writes t's files below dir (as put -r will copy them).
func writeSources(dir string, t tree) error {
	for p, n := range t {
		lp := filepath.Join(dir, filepath.FromSlash(p))
		if n.dir {
			if err := os.MkdirAll(lp, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(lp), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(lp, n.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// copySparse copies the container from to to, leaving holes where from
// reads as zeros (the --quick volumes are mostly holes).
func copySparse(from, to string) error {
	src, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	const chunk = 64 << 10
	zero := make([]byte, chunk)
	for off := 0; off < len(src); off += chunk {
		b := src[off:min(off+chunk, len(src))]
		if bytes.Equal(b, zero[:len(b)]) {
			continue
		}
		if _, err := f.WriteAt(b, int64(off)); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Truncate(int64(len(src))); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
