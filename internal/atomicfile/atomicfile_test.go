package atomicfile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a process that makes a temporary file and
// then waits to be killed (see startHolder).
func TestMain(m *testing.M) {
	if dest := os.Getenv("ATOMICFILE_HOLD"); dest != "" {
		f, err := Create(dest, Options{})
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		f.Write([]byte("half a secret"))
		fmt.Println(filepath.Join(filepath.Dir(dest), filepath.Base(f.TempName())))
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startHolder runs a process that creates a temporary file for dest and
// holds it; it returns the process and the file's path.
func startHolder(t *testing.T, dest string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_HOLD="+dest)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.HasPrefix(line, "error") {
		t.Fatalf("holder: %q %v", line, err)
	}
	return cmd, strings.TrimSpace(line)
}

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestFailedFillLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out")
	os.WriteFile(p, []byte("old"), 0o600)
	boom := errors.New("boom")
	if err := Write(p, Options{}, func(w io.Writer) error { w.Write([]byte("partial")); return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("destination changed: %q", b)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Fatalf("left in the directory: %v", names)
	}
}

func TestTempNameRecordsOwner(t *testing.T) {
	n := tempName(strings.Repeat("é", 200))
	if len(n) > 255 {
		t.Fatalf("name of %d bytes", len(n))
	}
	pid, start, ok := parseTempName(n)
	if !ok || pid != os.Getpid() {
		t.Fatalf("parse %q: %d %q %v", n, pid, start, ok)
	}
	if runtime.GOOS == "linux" && start == "0" {
		t.Fatal("no start time recorded on Linux")
	}
	if a, b := tempName("x"), tempName("x"); a == b {
		t.Fatal("two temporary names are equal")
	}
}

// The leftover of a process killed with SIGKILL is removed by the next
// sweep; one a running process holds is not touched.
func TestSweepRemovesOnlyDeadOwners(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	dead, deadTmp := startHolder(t, filepath.Join(dir, "a.img"))
	_, liveTmp := startHolder(t, filepath.Join(dir, "b.img"))
	dead.Process.Kill()
	dead.Wait()
	if _, err := os.Stat(deadTmp); err != nil {
		t.Fatalf("the killed process's temporary file is not there to sweep: %v", err)
	}
	ls := Sweep(dir)
	if len(ls) != 1 || !ls[0].Removed || ls[0].Path != deadTmp || ls[0].PID != dead.Process.Pid {
		t.Fatalf("sweep reported %+v, want the removal of %s", ls, deadTmp)
	}
	if _, err := os.Stat(deadTmp); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dead leftover still there: %v", err)
	}
	if _, err := os.Stat(liveTmp); err != nil {
		t.Fatalf("a running process's temporary file was touched: %v", err)
	}
	if !strings.Contains(ls[0].String(), "no longer running") {
		t.Fatalf("message %q", ls[0])
	}
}

// A name whose PID runs but was started at another time (a reused PID) is
// a leftover too; where start times are unknown it is reported, not
// removed. (This process's PID with another start time stands for it.)
func TestSweepReusedPID(t *testing.T) {
	dir := t.TempDir()
	n := ".x.cryptvol-" + strconv.Itoa(os.Getpid()) + "-zzzz-0123456789abcdef.tmp"
	os.WriteFile(filepath.Join(dir, n), []byte("s"), 0o600)
	ls := Sweep(dir)
	if len(ls) != 1 {
		t.Fatalf("sweep reported %+v", ls)
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		if !ls[0].Removed {
			t.Fatalf("reused PID: %+v, want removed", ls[0])
		}
	} else if ls[0].Removed {
		t.Fatalf("removed a file whose owner may run: %+v", ls[0])
	}
}

func TestSweepReportsLegacyAndIgnoresOthers(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{".cryptvol-123456.tmp", ".t.cva.compact-98765", "plain.txt", ".hidden"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600)
	}
	ls := Sweep(dir)
	var got []string
	for _, l := range ls {
		if l.Removed {
			t.Fatalf("removed %s", l.Path)
		}
		got = append(got, filepath.Base(l.Path))
	}
	if strings.Join(got, " ") != ".cryptvol-123456.tmp .t.cva.compact-98765" {
		t.Fatalf("reported %v", got)
	}
	if names := entries(t, dir); len(names) != 4 {
		t.Fatalf("files changed: %v", names)
	}
}

// Create sweeps the destination's directory and tells Leftover.
func TestCreateSweeps(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("needs SIGKILL")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "out.img")
	h, tmp := startHolder(t, p)
	h.Process.Kill()
	h.Wait()
	var heard []Leftover
	f, err := Create(p, Options{Leftover: func(l Leftover) { heard = append(heard, l) }})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Discard()
	if len(heard) != 1 || !heard[0].Removed || heard[0].Path != tmp {
		t.Fatalf("heard %+v", heard)
	}
	f.Write([]byte("x"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, n := range entries(t, dir) {
		b, _ := os.ReadFile(filepath.Join(dir, n))
		if bytes.Contains(b, []byte("half a secret")) {
			t.Fatalf("%s still holds the killed run's data", n)
		}
	}
}

func TestCreateInRoot(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	f, err := CreateIn(root, "sub/m.txt", Options{Perm: 0o640})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Discard()
	if filepath.Dir(f.TempName()) != "sub" {
		t.Fatalf("temporary file %s not beside its destination", f.TempName())
	}
	f.Write([]byte("m"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(dir, "sub", "m.txt")); m.Perm() != 0o640 && runtime.GOOS != "windows" {
		t.Fatalf("mode %v", m)
	}
	if _, err := CreateIn(root, "../escape", Options{}); err == nil {
		t.Fatal("a name outside the root was accepted")
	}
}

// SweepOnce sweeps a directory the first time only.
func TestSweepOnce(t *testing.T) {
	dir := t.TempDir()
	n := ".x.cryptvol-" + strconv.Itoa(os.Getpid()) + "-zzzz-0123456789abcdef.tmp"
	os.WriteFile(filepath.Join(dir, n), []byte("s"), 0o600)
	if ls := SweepOnce(dir); len(ls) != 1 {
		t.Fatalf("first sweep: %+v", ls)
	}
	os.WriteFile(filepath.Join(dir, n), []byte("s"), 0o600)
	if ls := SweepOnce(dir); len(ls) != 0 {
		t.Fatalf("second sweep: %+v", ls)
	}
	if ls := Sweep(dir); len(ls) != 1 {
		t.Fatalf("Sweep after SweepOnce: %+v", ls)
	}
}
