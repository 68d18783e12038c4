package keep

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// stores returns the stores to test here, each isolated from the user's
// own unlocked volumes and from other tests: a keyring of its own, an
// agent in a private runtime directory (served by this process).
func stores(t *testing.T) map[string]Store {
	t.Helper()
	out := map[string]Store{}
	t.Setenv("CRYPTVOL_KEYRING", fmt.Sprintf("cryptvol-test-%d-%s", os.Getpid(), t.Name()))
	if s, err := openKeyring(); err == nil {
		out["keyring"] = s
		t.Cleanup(func() { dropKeyring(s) })
	} else if runtime.GOOS == "linux" {
		t.Logf("kernel keyring not tested: %v", err)
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "js" && runtime.GOOS != "wasip1" {
		dir := filepath.Join(t.TempDir(), "run")
		t.Setenv("CRYPTVOL_RUNTIME_DIR", dir)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- ServeAgent(ctx, time.Minute) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("agent: %v", err)
			}
		})
		s, _ := openAgent(Options{})
		waitAgent(t, s.(*agent))
		out["agent"] = s
	}
	return out
}

func waitAgent(t *testing.T, a *agent) {
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("unix", a.sock()); err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the agent's socket did not appear")
}

func newEntry(t *testing.T, n uint64, d time.Duration) *Entry {
	secret := make([]byte, 300)
	rand.Read(secret)
	return &Entry{Volume: fmt.Sprintf("/v/%d.hc", n), File: volume.FileID{Dev: 7, Ino: n}, Format: "veracrypt",
		Hidden: n%2 == 0, Expires: time.Now().Add(d), Secret: secret}
}

// TestStoreRoundTrip puts, gets, lists and deletes entries in each store.
func TestStoreRoundTrip(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			a, b := newEntry(t, 1, time.Hour), newEntry(t, 2, 30*time.Minute)
			for _, e := range []*Entry{a, b} {
				if err := s.Put(e); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Get(a.File)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Secret, a.Secret) || got.Volume != a.Volume || got.Hidden != a.Hidden || !got.Expires.Equal(a.Expires.Round(0)) && got.Expires.Sub(a.Expires).Abs() > time.Millisecond {
				t.Fatalf("got %+v, want %+v", got, a)
			}
			list, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 2 || list[0].Volume != b.Volume || list[1].Volume != a.Volume {
				t.Fatalf("list %+v, want %s then %s", list, b.Volume, a.Volume)
			}
			for _, e := range list {
				if e.Secret != nil {
					t.Fatal("List returned a secret")
				}
			}
			// Put again replaces.
			a2 := newEntry(t, 1, time.Hour)
			if err := s.Put(a2); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(a.File); got == nil || !bytes.Equal(got.Secret, a2.Secret) {
				t.Fatal("a second Put did not replace the entry")
			}
			if ok, err := s.Delete(a.File); !ok || err != nil {
				t.Fatalf("delete: %v %v", ok, err)
			}
			if _, err := s.Get(a.File); !errors.Is(err, ErrNotFound) {
				t.Fatalf("get after delete: %v", err)
			}
			if ok, _ := s.Delete(a.File); ok {
				t.Fatal("deleted twice")
			}
			if n, err := s.DeleteAll(); n != 1 || err != nil {
				t.Fatalf("delete all: %d %v", n, err)
			}
			if list, _ := s.List(); len(list) != 0 {
				t.Fatalf("left after DeleteAll: %+v", list)
			}
		})
	}
}

// TestStoreTimeout checks that an entry goes when its time is up (the
// kernel's timeout on the key, the agent's timer).
func TestStoreTimeout(t *testing.T) {
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEntry(t, 3, time.Second)
			keepAlive := newEntry(t, 5, time.Hour) // so the agent does not exit
			if err := s.Put(keepAlive); err != nil {
				t.Fatal(err)
			}
			if err := s.Put(e); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(e.File); err != nil {
				t.Fatalf("gone at once: %v", err)
			}
			time.Sleep(2500 * time.Millisecond)
			if _, err := s.Get(e.File); !errors.Is(err, ErrNotFound) {
				t.Fatalf("still there after its timeout: %v", err)
			}
			for _, x := range must(s.List()) {
				if x.File == e.File {
					t.Fatal("listed after its timeout")
				}
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestAgentIsPrivate checks the agent's directory and socket modes, and
// that it refuses a directory others can enter.
func TestAgentIsPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows keeps others out with the profile directory's ACL, not modes")
	}
	s := stores(t)["agent"].(*agent)
	fi, err := os.Stat(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("runtime directory mode %o, want 700", fi.Mode().Perm())
	}
	fi, err = os.Stat(s.sock())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Mode().Type() != fs.ModeSocket {
		t.Errorf("socket mode %v, want a socket with 0600", fi.Mode())
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o755)
	t.Setenv("CRYPTVOL_RUNTIME_DIR", open)
	if err := ServeAgent(context.Background(), time.Second); err == nil {
		t.Fatal("the agent served from a directory that others can enter")
	}
}

// TestNothingOnDisk searches the runtime directory for the secret after a
// Put: the agent keeps it in memory only.
func TestNothingOnDisk(t *testing.T) {
	ss := stores(t)
	for name, s := range ss {
		e := newEntry(t, 9, time.Hour)
		if err := s.Put(e); err != nil {
			t.Fatal(name, err)
		}
		dir := RuntimeDir()
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			b, _ := os.ReadFile(p)
			if bytes.Contains(b, e.Secret[:32]) {
				t.Errorf("%s: the secret is in %s", name, p)
			}
			return nil
		})
	}
}
