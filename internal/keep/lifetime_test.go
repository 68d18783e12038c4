//go:build unix

package keep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the agent that an agent store
// launches (as `cryptvol unlock-agent` does for the CLI), so that the
// agent's start and exit are exercised as processes, not goroutines.
func TestMain(m *testing.M) {
	if os.Getenv("CRYPTVOL_TEST_AS_AGENT") == "1" {
		if err := ServeAgent(context.Background(), 2*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// launchingStores returns the stores as the CLI uses them: a keyring
// that does not exist yet, and an agent that each client starts when
// none answers, as a process of its own.
func launchingStores(t *testing.T) map[string]func() Store {
	t.Helper()
	out := map[string]func() Store{}
	ring := fmt.Sprintf("cryptvol-test-%d-%s", os.Getpid(), t.Name())
	t.Setenv("CRYPTVOL_KEYRING", ring)
	if _, err := openKeyring(); err == nil {
		out["keyring"] = func() Store { s, _ := openKeyring(); return s }
		t.Cleanup(func() { RemoveKeyring(ring) })
	} else {
		t.Logf("kernel keyring not tested: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	t.Setenv("CRYPTVOL_RUNTIME_DIR", dir)
	t.Setenv("CRYPTVOL_TEST_AS_AGENT", "")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out["agent"] = func() Store {
		return &agent{dir: dir, path: "/usr/bin/env", args: []string{"env", "CRYPTVOL_TEST_AS_AGENT=1", self}}
	}
	t.Cleanup(func() { StopAgent(dir) })
	return out
}

// TestUnlockLifetimeUnderConcurrency is issue 29 item 13: an unlocked
// volume must stay unlocked, whatever other commands unlock and lock
// meanwhile. Several clients (each its own store, as each command is)
// unlock and lock volumes of their own at once, again and again; every
// Put that succeeded must be found by Get until its own client deletes
// it, and a volume unlocked before the churn must still be listed after.
// Two races lost entries so: concurrent first unlocks each created the
// keyring, and the second displaced the first with its keys; and a
// command's unlock reached an agent that was exiting because the last
// other volume had just been locked, which dropped it.
func TestUnlockLifetimeUnderConcurrency(t *testing.T) {
	for name, open := range launchingStores(t) {
		t.Run(name, func(t *testing.T) {
			const clients, rounds = 4, 25
			var (
				mu   sync.Mutex
				lost []string
			)
			report := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				lost = append(lost, fmt.Sprintf(format, args...))
			}
			var keeper *Entry
			var wg sync.WaitGroup
			start := make(chan struct{})
			for c := 0; c < clients; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					<-start
					for r := 0; r < rounds; r++ {
						s := open()
						e := newEntry(t, uint64(1000*c+r+1), time.Minute)
						if err := s.Put(e); err != nil {
							report("client %d round %d: put: %v", c, r, err)
							continue
						}
						if _, err := open().Get(e.File); err != nil {
							report("client %d round %d: unlocked, then not found: %v", c, r, err)
						}
						if c == 0 && r == rounds/2 && keeper == nil {
							keeper = e // stays unlocked from here on
							continue
						}
						if ok, err := open().Delete(e.File); !ok || err != nil {
							report("client %d round %d: lock found nothing (%v, %v)", c, r, ok, err)
						}
					}
				}(c)
			}
			close(start)
			wg.Wait()
			for _, l := range lost {
				t.Error(l)
			}
			if keeper == nil {
				t.Fatal("no volume was kept unlocked")
			}
			es, err := open().List()
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 1 || es[0].File != keeper.File {
				t.Fatalf("after the churn the store lists %+v, want only %s", es, keeper.Volume)
			}
			if ok, err := open().Delete(keeper.File); !ok || err != nil {
				t.Fatalf("locking the kept volume: %v %v", ok, err)
			}
			if !errors.Is(must2(open().Get(keeper.File)), ErrNotFound) {
				t.Fatal("still unlocked after lock")
			}
		})
	}
}

// must2 returns the error of a two-valued call.
func must2[T any](_ T, err error) error { return err }

// TestFirstUnlocksAtOnce: several commands unlock at the same moment when
// nothing is unlocked yet — no keyring exists, no agent runs — and each
// must find its own volume unlocked afterwards. (Each created the keyring,
// and the last one's replaced the others' with their keys; each started an
// agent, and the last one's took over the socket of the others.)
func TestFirstUnlocksAtOnce(t *testing.T) {
	for name, open := range launchingStores(t) {
		t.Run(name, func(t *testing.T) {
			const clients, tries = 5, 8
			for try := 0; try < tries; try++ {
				var wg sync.WaitGroup
				start := make(chan struct{})
				entries := make([]*Entry, clients)
				errs := make([]error, clients)
				for c := range entries {
					entries[c] = newEntry(t, uint64(100*try+c+1), time.Minute)
					wg.Add(1)
					go func(c int) {
						defer wg.Done()
						s := open()
						<-start
						errs[c] = s.Put(entries[c])
					}(c)
				}
				close(start)
				wg.Wait()
				if name == "agent" {
					// Each put has returned: the agent it started either
					// serves or has exited, none is still starting (one
					// such, left behind, recreated the runtime directory
					// while the test removed it).
					if running := agentsIn(open().(*agent).dir); len(running) > 1 {
						t.Errorf("try %d: %d agents run after the puts returned (pids %v), want the one that serves", try, len(running), running)
					}
				}
				for c, e := range entries {
					if errs[c] != nil {
						t.Fatalf("try %d: put %d: %v", try, c, errs[c])
					}
					if _, err := open().Get(e.File); err != nil {
						t.Errorf("try %d: volume %d was unlocked, then not found: %v", try, c, err)
					}
				}
				if n, err := open().DeleteAll(); err != nil || n != clients {
					t.Errorf("try %d: locked %d (%v), want %d", try, n, err, clients)
				}
				if name == "keyring" {
					RemoveKeyring(os.Getenv("CRYPTVOL_KEYRING"))
				} else {
					a := open().(*agent)
					waitNoAgent(t, a)
					// Every agent a put started has exited or was the one
					// that served: none is left starting.
					// (The last one removes its socket first, then exits.)
					left := agentsIn(a.dir)
					for i := 0; i < 200 && len(left) > 0; i++ {
						time.Sleep(10 * time.Millisecond)
						left = agentsIn(a.dir)
					}
					if len(left) > 0 {
						t.Fatalf("try %d: agents left running after the last one exited: pids %v", try, left)
					}
				}
			}
		})
	}
}

// waitNoAgent waits until the agent of an emptied store has gone.
func waitNoAgent(t *testing.T, a *agent) {
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(a.sock()); err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the emptied agent did not exit")
}
