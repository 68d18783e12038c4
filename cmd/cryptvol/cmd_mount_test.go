package main

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/mount"
)

// TestMountScripts runs testdata/script/mount*.txtar with the conditions
// they need: [fuse] (FUSE usable here) and [root]. TestScripts runs the
// same files without those conditions, so there they skip at their first
// line. Every mount made under a script's $WORK is undone when the script
// ends, whether it passed or not.
func TestMountScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/script/mount*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no mount scripts: %v", err)
	}
	if err := mount.Available(); err != nil {
		t.Skipf("skipping the mount scripts: %v", err)
	}
	tc := filepath.Join(testdata.Unpack(t, "tcrypt-images.tar.xz"), "tcrypt-images")
	testscript.Run(t, testscript.Params{
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TCRYPT", tc)
			run := filepath.Join(env.WorkDir, ".run")
			isolateUnlock(env, run)
			env.Setenv("MTOOLS_SKIP_CHECK", "1")
			env.Defer(func() { cleanupMounts(env.T(), env.WorkDir, run) })
			return nil
		},
		Cmds: withFSImageCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitcode,
			"sleep":    cmdSleep,
			// unpack NAME VAR: as in TestScripts.
			"unpack": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: unpack NAME VAR")
				}
				ts.Setenv(args[1], testdata.Unpack(t, args[0]))
			},
		}),
		Condition: func(cond string) (bool, error) {
			switch {
			case cond == "fuse":
				return mount.Available() == nil, nil
			case cond == "root":
				return os.Geteuid() == 0, nil
			case strings.HasPrefix(cond, "file:"): // [file:/usr/sbin/fuse2fs]
				_, err := os.Stat(strings.TrimPrefix(cond, "file:"))
				return err == nil, nil
			}
			if ok, known := toolCondition(cond); known {
				return ok, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

// cleanupMounts ends the mount daemons recorded in run and detaches
// anything still mounted under dir, deepest first.
func cleanupMounts(t interface{ Log(...any) }, dir, run string) {
	es, _ := mount.Table{Dir: run}.Entries()
	for _, e := range es {
		if e.Alive {
			t.Log(fmt.Sprintf("cleanup: stopping the mount daemon of %s (PID %d)", e.MountPoint, e.PID))
			mount.Terminate(e.PID)
			for i := 0; i < 250 && mount.ProcessAlive(e.PID); i++ {
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	mps, _ := mount.MountPoints()
	var under []string
	for _, mp := range mps {
		if strings.HasPrefix(mp.Dir, dir+string(filepath.Separator)) {
			under = append(under, mp.Dir)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(under)))
	for _, d := range under {
		t.Log("cleanup: detaching " + d)
		mount.Unmount(d, true)
	}
}

// cryptvolCmd runs the cryptvol under test (testscript puts it on PATH).
func cryptvolCmd(t testing.TB, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("cryptvol", args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("cryptvol %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestMountSIGTERMDuringWrites kills the mount daemon with SIGTERM while
// files are being written and fsynced through the mount, then checks that
// the volume still opens, fsck.fat accepts its filesystem, and every file
// whose fsync returned is there with its content.
func TestMountSIGTERMDuringWrites(t *testing.T) {
	if err := mount.Available(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	env := append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+run)
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("sigterm test password\n"), 0o600)
	vol := filepath.Join(dir, "v.hc")
	creds := []string{"--password-file", pw, "--pim", "1"}
	cryptvolCmd(t, env, append([]string{"create", vol, "--size", "48M", "--quick"}, creds...)...)
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	cryptvolCmd(t, env, append([]string{"mount", vol, mnt}, creds...)...)
	t.Cleanup(func() { cleanupMounts(t, dir, run) })
	es, err := mount.Table{Dir: run}.Entries()
	if err != nil || len(es) != 1 || !es[0].Alive {
		t.Fatalf("mount table: %+v, %v", es, err)
	}
	pid := es[0].PID

	// The writer: one file after another, each fsynced, until the mount
	// goes away under it.
	type file struct {
		name string
		data []byte
	}
	var (
		mu      sync.Mutex
		durable []file
	)
	stopped := make(chan error, 1)
	// A file kept open all along makes the mount busy when SIGTERM comes,
	// so the daemon must take the hard way: flush, then detach.
	// Files are created relative to a directory handle in the mount, so
	// that once the mount is detached they fail instead of landing in the
	// directory underneath.
	root, err := os.OpenRoot(mnt)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	held, err := root.Create("held.log")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	go func() {
		for i := 0; ; i++ {
			fmt.Fprintf(held, "starting file %d\n", i)
			data := make([]byte, 50<<10+i*1111%(200<<10))
			rand.Read(data)
			name := fmt.Sprintf("f%04d.bin", i)
			f, err := root.Create(name)
			if err != nil {
				stopped <- err
				return
			}
			for off := 0; off < len(data) && err == nil; off += 32 << 10 {
				_, err = f.Write(data[off:min(off+32<<10, len(data))])
			}
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				f.Close()
				stopped <- err
				return
			}
			mu.Lock()
			durable = append(durable, file{name, data})
			mu.Unlock()
			f.Close()
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(durable)
		mu.Unlock()
		if n >= 25 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d files written in 30 s", n)
		}
	}
	if err := mount.Terminate(pid); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-stopped:
		t.Logf("the writer stopped with: %v", err)
	case <-time.After(30 * time.Second):
		log, _ := os.ReadFile(filepath.Join(run, fmt.Sprint(pid)+".log"))
		t.Fatalf("the writer was not stopped by the unmount; daemon alive %v; its log:\n%s", mount.ProcessAlive(pid), log)
	}
	for i := 0; mount.ProcessAlive(pid); i++ {
		if i > 1500 {
			t.Fatal("the daemon did not exit after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, ok := mount.IsMountPoint(mnt); ok {
		t.Error("still mounted after SIGTERM")
	}
	if es, _ := (mount.Table{Dir: run}).Entries(); len(es) != 0 {
		t.Errorf("mount table not cleaned: %+v", es)
	}

	img := filepath.Join(dir, "plain.img")
	cryptvolCmd(t, env, append([]string{"export", vol, img}, creds...)...)
	if fsck, err := exec.LookPath("fsck.fat"); err == nil {
		if out, err := exec.Command(fsck, "-n", img).CombinedOutput(); err != nil {
			t.Errorf("fsck.fat -n: %v\n%s", err, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d files were fsynced before SIGTERM", len(durable))
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	for _, f := range durable {
		cryptvolCmd(t, env, append([]string{"get", vol, "/" + f.name, filepath.Join(out, f.name)}, creds...)...)
		got, err := os.ReadFile(filepath.Join(out, f.name))
		if err != nil || !bytes.Equal(got, f.data) {
			t.Errorf("%s: %d bytes (%v), want the %d fsynced", f.name, len(got), err, len(f.data))
		}
	}
}
