package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	mrand "math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/fat"
	"github.com/cryptvol/cryptvol/mount"
)

// lockRefusal is what a command refused by the volume lock says.
var lockRefusal = regexp.MustCompile(`is mounted (read-only )?at .* by PID [0-9]+|is being (written|read) by cryptvol [a-z]+ \(PID [0-9]+\)|is in use by another process`)

// concurrencyWorker is one process after another of put, mkdir and rm on
// its own names, with the model of what its successful commands left.
type concurrencyWorker struct {
	id      int
	files   map[string][]byte // path -> content, of puts that succeeded
	gone    []string          // paths whose rm succeeded, or whose put was refused
	dirs    []string          // directories whose mkdir succeeded
	ok, ref int               // commands that succeeded, refused
	okAfter int               // commands that succeeded after the unmount
}

// TestConcurrentWriters is issue 15's "no volume lock" defect as a test:
// before the lock, two `cryptvol put` at once both exited 0 and lost
// files, and a put into a mounted volume exited 0 and was gone after the
// unmount. Here four processes at a time put, mkdir and rm in one volume
// while `cryptvol mount` has it and a program writes through the mount,
// and go on after the unmount. Every command must exit 0 or 5 with the
// lock's message; afterwards fsck.fat finds the filesystem clean and every
// file whose command succeeded (through the mount too) is there with its
// content, and nothing that was refused or removed is. (The long torture
// test builds on this one.)
func TestConcurrentWriters(t *testing.T) {
	if _, err := exec.LookPath("cryptvol"); err != nil {
		t.Skip("skipping: the cryptvol test command is not on PATH")
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	env := append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+run)
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("concurrency test password\n"), 0o600)
	vol := filepath.Join(dir, "v.hc")
	creds := []string{"--password-file", pw, "--pim", "1", "--hash", "SHA-512", "--encryption", "AES"}
	cryptvolCmd(t, env, append([]string{"create", vol, "--size", "24M", "--quick"}, creds...)...)

	// The mount, and a program writing files through it.
	var (
		mounted   = mount.Available() == nil
		unmounted atomic.Bool
		mntFiles  = map[string][]byte{}
		mntMu     sync.Mutex
		stopW     = make(chan struct{})
		writerErr = make(chan error, 1)
	)
	mnt := filepath.Join(dir, "mnt")
	if mounted {
		os.Mkdir(mnt, 0o755)
		cryptvolCmd(t, env, append([]string{"mount", vol, mnt}, creds...)...)
		t.Cleanup(func() { cleanupMounts(t, dir, run) })
		go func() {
			for k := 0; ; k++ {
				select {
				case <-stopW:
					writerErr <- nil
					return
				default:
				}
				data := make([]byte, 1000+k*733%(60<<10))
				rand.Read(data)
				name := fmt.Sprintf("m%03d.bin", k)
				f, err := os.Create(filepath.Join(mnt, name))
				if err == nil {
					_, err = f.Write(data)
					if serr := f.Sync(); err == nil {
						err = serr
					}
					if cerr := f.Close(); err == nil {
						err = cerr
					}
				}
				if err != nil {
					writerErr <- fmt.Errorf("writing %s through the mount: %v", name, err)
					return
				}
				mntMu.Lock()
				mntFiles[name] = data
				mntMu.Unlock()
			}
		}()
	} else {
		unmounted.Store(true)
		t.Logf("NOT CHECKED: the mount part (%v); the processes run without it", mount.Available())
	}

	const workers = 4
	ws := make([]*concurrencyWorker, workers)
	var wg sync.WaitGroup
	var refusedByMount atomic.Int32
	for i := range ws {
		w := &concurrencyWorker{id: i, files: map[string][]byte{}}
		ws[i] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mrand.New(mrand.NewSource(int64(i)))
			for attempt := 0; attempt < 100 && w.okAfter < 3; attempt++ {
				after := unmounted.Load()
				args, apply := w.next(rng, attempt, dir)
				code, out := runCode(env, append(args, creds...)...)
				switch code {
				case 0:
					w.ok++
					if after {
						w.okAfter++
					}
					apply(true)
				case exitDestroy:
					w.ref++
					apply(false)
					// Try again a little later, as a user would.
					time.Sleep(time.Duration(10+rng.Intn(40)) * time.Millisecond)
					if !lockRefusal.MatchString(out) {
						t.Errorf("worker %d: %v exited 5 without the lock's message:\n%s", i, args, out)
					}
					if !after && regexp.MustCompile(`is mounted at`).MatchString(out) {
						refusedByMount.Add(1)
					}
				default:
					t.Errorf("worker %d: %v exited %d (want 0, or 5 for a held lock):\n%s", i, args, code, out)
					apply(false)
				}
			}
		}()
	}
	if mounted {
		// Unmount once the mount has refused each worker a few times and
		// the program has written through it.
		deadline := time.Now().Add(60 * time.Second)
		for refusedByMount.Load() < 2*workers || count(&mntMu, mntFiles) < 5 {
			if time.Now().After(deadline) {
				t.Fatalf("after 60 s: %d commands refused by the mount, %d files written through it", refusedByMount.Load(), count(&mntMu, mntFiles))
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(stopW)
		if err := <-writerErr; err != nil {
			t.Error(err)
		}
		cryptvolCmd(t, env, "unmount", mnt)
		unmounted.Store(true)
	}
	wg.Wait()

	for _, w := range ws {
		t.Logf("worker %d: %d commands succeeded (%d after the unmount), %d refused", w.id, w.ok, w.okAfter, w.ref)
		if w.okAfter == 0 {
			t.Errorf("worker %d never got the volume after the unmount", w.id)
		}
	}
	t.Logf("%d files written through the mount", len(mntFiles))

	img := filepath.Join(dir, "plain.img")
	cryptvolCmd(t, env, append([]string{"export", vol, img}, creds...)...)
	if fsck, err := exec.LookPath("fsck.fat"); err == nil {
		if out, err := exec.Command(fsck, "-n", img).CombinedOutput(); err != nil {
			t.Errorf("fsck.fat -n: %v\n%s", err, out)
		}
	} else {
		t.Log("NOT CHECKED: fsck.fat is not installed (dosfstools)")
	}
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	ffs, err := fat.OpenWithOptions(f, fi.Size(), fat.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for name, data := range mntFiles {
		want["/"+name] = data
	}
	for _, w := range ws {
		for name, data := range w.files {
			want[name] = data
		}
		for _, d := range w.dirs {
			if st, err := ffs.Stat(d); err != nil || !st.IsDir() {
				t.Errorf("directory %s, whose mkdir succeeded, is missing: %v", d, err)
			}
		}
		for _, name := range w.gone {
			if _, err := ffs.Stat(name); err == nil {
				t.Errorf("%s exists, but its put was refused or its rm succeeded", name)
			}
		}
	}
	for name, data := range want {
		got, err := ffs.ReadFile(name)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s: %d bytes (%v), want the %d its command wrote", name, len(got), err, len(data))
		}
	}
}

func count(mu *sync.Mutex, m map[string][]byte) int {
	mu.Lock()
	defer mu.Unlock()
	return len(m)
}

// next picks the worker's next command and returns its arguments (without
// credentials) and how to update the model once its outcome is known.
func (w *concurrencyWorker) next(rng *mrand.Rand, attempt int, dir string) ([]string, func(ok bool)) {
	vol := filepath.Join(dir, "v.hc")
	switch op := rng.Intn(4); {
	case op == 0 && len(w.files) > 0:
		var victim string
		for name := range w.files {
			if victim == "" || name < victim {
				victim = name
			}
		}
		return []string{"rm", vol, victim}, func(ok bool) {
			if ok {
				delete(w.files, victim)
				w.gone = append(w.gone, victim)
			}
		}
	case op == 1:
		d := fmt.Sprintf("/d%d-%02d", w.id, attempt)
		return []string{"mkdir", vol, d}, func(ok bool) {
			if ok {
				w.dirs = append(w.dirs, d)
			}
		}
	}
	name := fmt.Sprintf("/f%d-%02d.bin", w.id, attempt)
	if len(w.dirs) > 0 && rng.Intn(2) == 0 {
		name = w.dirs[rng.Intn(len(w.dirs))] + name
	}
	data := make([]byte, 1+rng.Intn(40<<10))
	rng.Read(data)
	src := filepath.Join(dir, fmt.Sprintf("src-%d-%d", w.id, attempt))
	os.WriteFile(src, data, 0o600)
	return []string{"put", vol, src, name}, func(ok bool) {
		os.Remove(src)
		if ok {
			w.files[name] = data
		} else {
			w.gone = append(w.gone, name)
		}
	}
}

// runCode runs the cryptvol under test and returns its exit code and
// combined output.
func runCode(env []string, args ...string) (int, string) {
	cmd := exec.Command("cryptvol", args...)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String()
	}
	return -1, fmt.Sprintf("%v\n%s", err, out.String())
}
