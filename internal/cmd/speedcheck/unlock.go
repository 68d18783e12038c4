package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/internal/keep"
	"github.com/cryptvol/cryptvol/internal/oracle"
)

// unlockChecks times how long unlocking takes, cryptvol against VeraCrypt
// 1.26.24 on the same files in the same run (issue 16's table): it builds
// cryptvol, creates an AES/SHA-512 and an AES/Streebog volume with it
// (default PIM), and times `cryptvol info` (auto-detection, no --hash)
// against VeraCrypt mounting the file (internal/oracle), with the right
// and a wrong password, alternating, best of rounds, on a quiet machine
// and beside busy CPU-bound processes it starts itself. Goals: right
// password at most 0.5x VeraCrypt's time, wrong password at most 0.8x
// (while cryptvol still tries every PRF, Argon2id and TrueCrypt's KDFs, and
// VeraCrypt on Linux tries five PRFs). It also checks that `ls` after
// `cryptvol unlock` takes under 0.1 s and that `lock` makes it ask again.
func unlockChecks(rounds, busy int) (failed bool) {
	vc, err := oracle.Find(oracle.VeraCrypt12624)
	if err != nil {
		fmt.Printf("unlock: SKIP (VeraCrypt %s oracle unavailable: %v)\n", oracle.VeraCrypt12624, err)
		return false
	}
	dir, err := os.MkdirTemp("", "speedcheck-unlock-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(dir)
	cv := filepath.Join(dir, "cryptvol")
	if out, err := exec.Command("go", "build", "-o", cv, "github.com/cryptvol/cryptvol/cmd/cryptvol").CombinedOutput(); err != nil {
		fatal(fmt.Errorf("building cryptvol: %v\n%s", err, out))
	}
	const right, wrong = "speedcheck: the right password", "speedcheck: a wrong password"
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s+"\n"), 0o600); err != nil {
			fatal(err)
		}
		return p
	}
	pwRight, pwWrong := write("right", right), write("wrong", wrong)
	env := append(os.Environ(), "CRYPTVOL_RUNTIME_DIR="+filepath.Join(dir, "run"), "CRYPTVOL_KEYRING=cryptvol-speedcheck")
	defer keep.RemoveKeyring("cryptvol-speedcheck")
	var lastCPU time.Duration // CPU time (user+system) of the last cryptvol run
	runCV := func(args ...string) (time.Duration, error) {
		cmd := exec.Command(cv, args...)
		cmd.Env = env
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(t0)
		if cmd.ProcessState != nil {
			lastCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		if err != nil {
			return d, fmt.Errorf("cryptvol %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return d, nil
	}
	vols := []struct{ name, hash string }{{"AES / SHA-512", "SHA-512"}, {"AES / Streebog", "Streebog"}}
	for i, v := range vols {
		p := filepath.Join(dir, fmt.Sprintf("v%d.hc", i))
		if _, err := runCV("create", p, "--size", "4M", "--encryption", "AES", "--hash", v.hash, "--password-file", pwRight, "--quick", "--non-interactive"); err != nil {
			fatal(err)
		}
		vols[i].name = v.name + "\x00" + p
	}

	fmt.Printf("\nunlock: `cryptvol info` (no --hash) against VeraCrypt %s mounting the same file (user-space, -m nokernelcrypto);\n", vc.Version)
	fmt.Printf("wall time, alternating, best of %d; load: %d busy processes started here; %s\n", rounds, busy, loadAverage())
	fmt.Printf("%-16s %-8s %-6s %10s %10s %7s  %-10s %s\n", "volume", "password", "load", "cryptvol", "VeraCrypt", "ratio", "goal", "(cryptvol CPU s, load average)")
	ctx := context.Background()
	for _, loaded := range []bool{false, true} {
		var stop func()
		if loaded {
			stop = startBusy(busy)
		}
		for _, v := range vols {
			name, path, _ := strings.Cut(v.name, "\x00")
			for _, ok := range []bool{true, false} {
				pw, pwFile, goal, label := right, pwRight, 0.5, "right"
				if !ok {
					pw, pwFile, goal, label = wrong, pwWrong, 0.8, "wrong"
				}
				var ours, theirs, cpu time.Duration
				for r := 0; r < rounds; r++ {
					d, err := runCV("info", path, "--password-file", pwFile)
					if (err == nil) != ok {
						fatal(fmt.Errorf("%s, %s password: %v", name, label, err))
					}
					if ours == 0 || d < ours {
						ours, cpu = d, lastCPU
					}
					d, err = vc.Time(ctx, path, oracle.MountOptions{Password: pw, ReadOnly: true})
					if (err == nil) != ok || (err != nil && !errors.Is(err, oracle.ErrRefused)) {
						fatal(fmt.Errorf("VeraCrypt, %s, %s password: %v", name, label, err))
					}
					if theirs == 0 || d < theirs {
						theirs = d
					}
				}
				ratio := ours.Seconds() / theirs.Seconds()
				verdict := "ok"
				if ratio > goal {
					verdict, failed = "ABOVE", true
				}
				load := "quiet"
				if loaded {
					load = fmt.Sprintf("+%d", busy)
				}
				fmt.Printf("%-16s %-8s %-6s %9.2fs %9.2fs %6.2fx  %-5s %.1fx  (%.2f, %s)\n", name, label, load, ours.Seconds(), theirs.Seconds(), ratio, verdict, goal, cpu.Seconds(), loadAverage())
			}
		}
		if stop != nil {
			stop()
		}
	}
	fmt.Printf("(%s at the end)\n", loadAverage())

	// Unlock once, then ls without a password.
	_, path, _ := strings.Cut(vols[0].name, "\x00")
	if _, err := runCV("unlock", path, "--password-file", pwRight, "--timeout", "10m"); err != nil {
		fatal(err)
	}
	var best time.Duration
	for r := 0; r < max(rounds, 3); r++ {
		d, err := runCV("ls", path)
		if err != nil {
			fatal(err)
		}
		if best == 0 || d < best {
			best = d
		}
	}
	verdict := "ok"
	if best > 100*time.Millisecond {
		verdict, failed = "ABOVE", true
	}
	fmt.Printf("\nunlock once: `cryptvol ls` of the unlocked AES/SHA-512 volume, no password: %.3f s (best of %d)  %s < 0.1 s\n", best.Seconds(), max(rounds, 3), verdict)
	if _, err := runCV("lock", path); err != nil {
		fatal(err)
	}
	if _, err := runCV("ls", path, "--non-interactive"); err == nil {
		fmt.Println("unlock once: ls still opened the volume after lock  FAILED")
		failed = true
	} else {
		fmt.Println("unlock once: after lock, ls asks for the password again  ok")
	}
	return failed
}

// startBusy starts n CPU-bound processes (this program with -busy-loop) and
// returns what stops them.
func startBusy(n int) func() {
	exe, err := os.Executable()
	if err != nil {
		fatal(err)
	}
	var cmds []*exec.Cmd
	for i := 0; i < n; i++ {
		c := exec.Command(exe, "-busy-loop")
		if err := c.Start(); err != nil {
			fatal(err)
		}
		cmds = append(cmds, c)
	}
	time.Sleep(200 * time.Millisecond)
	return func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}
}

// busyLoop is the -busy-loop mode: one thread spinning until killed.
func busyLoop() {
	x := uint64(1)
	for {
		x = x*6364136223846793005 + 1442695040888963407
		if x == 0 {
			fmt.Print("")
		}
	}
}

// loadAverage returns the 1-minute load average as /proc/loadavg says.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	return "load average " + strings.Fields(string(b))[0]
}
