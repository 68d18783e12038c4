package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cryptvol/cryptvol/internal/keep"
	"github.com/cryptvol/cryptvol/internal/testdata"
	"github.com/cryptvol/cryptvol/volume"
)

// TestMain lets testscript run this test binary as the `cryptvol` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"cryptvol": func() {
			os.Exit(run(os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
		},
		"holdlock": func() { os.Exit(holdLock()) },
		"killat":   func() { os.Exit(killAt()) },
		// cryptvol with its container's writes and flushes streamed to
		// $CRYPTVOL_TEST_OPLOG (the mount explorer records a daemon).
		"cryptvol-oplog": func() { os.Exit(runOplog()) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script. Scripts
// find the unpacked corpus in $TCRYPT (TrueCrypt/VeraCrypt images) and
// $CORPUS (other files of ../shared/testdata/cryptsetup, unpacked on
// demand with the `unpack` command).
func TestScripts(t *testing.T) {
	tc := filepath.Join(testdata.Unpack(t, "tcrypt-images.tar.xz"), "tcrypt-images")
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("TCRYPT", tc)
			// Lock, mount and unlock records stay in the script's
			// directory.
			isolateUnlock(env, filepath.Join(env.WorkDir, ".run"))
			return nil
		},
		Cmds: withFSImageCmds(map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exitcode N CMD ARGS...: see cmdExitcode.
			"exitcode": cmdExitcode,
			// checkratios CMP A B...: see cmdCheckRatios.
			"checkratios": cmdCheckRatios,
			// mode PERM FILE: FILE's permission bits are PERM (octal).
			"mode": cmdMode,
			// filesize FILE N: FILE is N bytes long.
			"filesize": cmdFilesize,
			// noleftover DIR FILE: no file below DIR but FILE holds
			// FILE's contents, and none is a temporary file.
			"noleftover": cmdNoLeftover,
			// waitfile FILE: see cmdWaitFile.
			"waitfile": cmdWaitFile,
			// sleep DURATION: wait (for a timeout to pass).
			"sleep": cmdSleep,
			// fatpatch VOLUME PWFILE OP ARGS...: see cmdFatpatch.
			"fatpatch": cmdFatpatch,
			// unpack NAME VAR: unpack a corpus file and set $VAR to its path.
			"unpack": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: unpack NAME VAR")
				}
				ts.Setenv(args[1], testdata.Unpack(t, args[0]))
			},
		}),
		Condition: func(cond string) (bool, error) {
			if ok, known := toolCondition(cond); known {
				return ok, nil
			}
			if cond == "root" { // [root]: running as root (ntfs-3g mounts images)
				return os.Geteuid() == 0, nil
			}
			return false, nil
		},
	})
}

// cmdExitcode is the script command `exitcode N CMD ARGS...`: run CMD and
// require exit status N (the CLI's exit codes are part of its contract).
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N CMD [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

// toolCondition is the script condition [tool:NAME]: true when NAME is on
// PATH. known is false for other conditions.
func toolCondition(cond string) (ok, known bool) {
	name, isTool := strings.CutPrefix(cond, "tool:")
	if !isTool {
		return false, false
	}
	_, err := exec.LookPath(name)
	return err == nil, true
}

// withFSImageCmds adds fsImageCmds to cmds.
func withFSImageCmds(cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	for k, v := range fsImageCmds {
		cmds[k] = v
	}
	return cmds
}
func cmdMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: mode PERM FILE")
	}
	want, err := strconv.ParseUint(args[0], 8, 32)
	if err != nil {
		ts.Fatalf("mode: %v", err)
	}
	st, err := os.Lstat(ts.MkAbs(args[1]))
	ts.Check(err)
	if got := uint64(st.Mode().Perm()); (got == want) == neg {
		ts.Fatalf("%s has mode %o, want %s%o", args[1], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

func cmdFilesize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: filesize FILE N")
	}
	want, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		ts.Fatalf("filesize: %v", err)
	}
	st, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if (st.Size() == want) == neg {
		ts.Fatalf("%s is %d bytes, want %s%d", args[0], st.Size(), map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

func cmdNoLeftover(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: noleftover DIR FILE")
	}
	dir, keep := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	secret, err := os.ReadFile(keep)
	ts.Check(err)
	for _, p := range findPlaintext(tsFataler{ts}, dir, secret, keep) {
		ts.Fatalf("%s is left behind", p)
	}
}

type tsFataler struct{ ts *testscript.TestScript }

func (f tsFataler) Fatal(args ...any) { f.ts.Fatalf("%s", fmt.Sprint(args...)) }

// holdLock is the script program `holdlock exclusive|shared FILE COMMAND
// [MOUNTPOINT]`, run in the background: it takes the volume lock on FILE
// naming itself COMMAND (and MOUNTPOINT, as a mount daemon does), creates
// FILE.held, and waits to be killed. The cryptvol commands of the script
// then meet the lock as they would meet another cryptvol.
func holdLock() int {
	args := os.Args[1:]
	if len(args) < 3 || len(args) > 4 || (args[0] != "exclusive" && args[0] != "shared") {
		fmt.Fprintln(os.Stderr, "usage: holdlock exclusive|shared FILE COMMAND [MOUNTPOINT]")
		return 1
	}
	mp := ""
	if len(args) == 4 {
		mp = args[3]
	}
	volume.SetLockHolder(args[2], mp)
	d, err := volume.OpenDevice(args[1], args[0] == "shared")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer d.Close()
	if err := os.WriteFile(args[1]+".held", nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	time.Sleep(10 * time.Minute)
	return 1
}

// cmdWaitFile is the script command `waitfile FILE`: wait (up to 20 s)
// until FILE exists.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	for i := 0; i < 2000; i++ {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	ts.Fatalf("%s did not appear in 20 s", args[0])
}

// isolateUnlock gives a script its own store of unlocked volumes: a
// keyring of its own and an agent in run; both are emptied (and the agent
// ends) when the script ends.
func isolateUnlock(env *testscript.Env, run string) {
	var rnd [6]byte
	rand.Read(rnd[:])
	name := "cryptvol-test-" + hex.EncodeToString(rnd[:])
	env.Setenv("CRYPTVOL_KEYRING", name)
	env.Setenv("CRYPTVOL_RUNTIME_DIR", run)
	env.Defer(func() {
		keep.RemoveKeyring(name)
		keep.StopAgent(run)
	})
}

// cmdSleep is the script command `sleep DURATION` (time.ParseDuration).
func cmdSleep(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: sleep DURATION")
	}
	d, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("sleep: %v", err)
	}
	time.Sleep(d)
}
