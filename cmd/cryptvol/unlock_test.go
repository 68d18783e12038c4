package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/internal/keep"
)

// cli runs one command in this process and returns its stdout.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &app{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}); code != 0 {
		t.Fatalf("cryptvol %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// TestUnlockLeavesNothingOnDisk unlocks a volume, in the kernel keyring
// and through the agent, and searches every file of the runtime directory
// and of the volume's directory for the master key (raw, hex and base64)
// and the password.
func TestUnlockLeavesNothingOnDisk(t *testing.T) {
	for _, store := range []string{"keyring", "agent"} {
		t.Run(store, func(t *testing.T) {
			dir := t.TempDir()
			run := filepath.Join(dir, ".run")
			t.Setenv("CRYPTVOL_UNLOCK_STORE", store)
			t.Setenv("CRYPTVOL_RUNTIME_DIR", run)
			t.Setenv("CRYPTVOL_KEYRING", "cryptvol-test-disk-"+store)
			t.Cleanup(func() { keep.RemoveKeyring("cryptvol-test-disk-" + store) })
			if store == "agent" {
				if runtime.GOOS == "windows" {
					t.Skip("the agent is tested on Unix")
				}
				// The agent of this process: a re-executed test binary
				// would not know it is cryptvol.
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- keep.ServeAgent(ctx, time.Minute) }()
				t.Cleanup(func() { cancel(); <-done })
				waitFor(t, filepath.Join(run, keep.SocketName))
			} else if _, err := keep.Open(keep.Options{}); err != nil {
				t.Skipf("no kernel keyring here: %v", err)
			}
			vol := filepath.Join(dir, "v.hc")
			pwFile := filepath.Join(dir, "pw")
			const password = "a password to look for"
			os.WriteFile(pwFile, []byte(password+"\n"), 0o600)
			cli(t, "create", vol, "--size", "1M", "--password-file", pwFile, "--pim", "1", "--quick", "--non-interactive")
			var info struct {
				MasterKey string `json:"master_key"`
			}
			json.Unmarshal([]byte(cli(t, "info", vol, "--password-file", pwFile, "--pim", "1", "--show-key", "--batch", "--json")), &info)
			key, err := hex.DecodeString(info.MasterKey)
			if err != nil || len(key) != 64 {
				t.Fatalf("master key %q", info.MasterKey)
			}
			cli(t, "unlock", vol, "--password-file", pwFile, "--pim", "1")
			if out := cli(t, "list", "--unlocked"); !strings.Contains(out, vol) {
				t.Fatalf("not listed as unlocked:\n%s", out)
			}
			cli(t, "ls", vol) // no password: the kept unlock
			var needles [][]byte
			for _, half := range [][]byte{key[:32], key[32:]} {
				needles = append(needles, half, []byte(hex.EncodeToString(half)), []byte(base64.StdEncoding.EncodeToString(half)))
			}
			needles = append(needles, []byte(password))
			searched := 0
			for _, root := range []string{run, dir} {
				filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
					if err != nil || !d.Type().IsRegular() || p == pwFile {
						return nil
					}
					b, _ := os.ReadFile(p)
					searched++
					for _, n := range needles {
						if bytes.Contains(b, n) {
							t.Errorf("%s holds secret bytes (%d of them)", p, len(n))
						}
					}
					return nil
				})
			}
			if searched < 1 {
				t.Fatal("searched no file")
			}
			cli(t, "lock", vol)
		})
	}
}

func waitFor(t *testing.T, path string) {
	for i := 0; i < 300; i++ {
		if _, err := os.Stat(path); err == nil {
			time.Sleep(20 * time.Millisecond) // listen follows bind
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}
