package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cryptvol/cryptvol/internal/testdata"
)

// TestMain lets testscript run this test binary as the `cryptvol` command.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"cryptvol": func() {
			os.Exit(run(os.Args[1:], &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
		},
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
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// exitcode N CMD ARGS...: see cmdExitcode.
			"exitcode": cmdExitcode,
			// fatpatch VOLUME PWFILE OP ARGS...: see cmdFatpatch.
			"fatpatch": cmdFatpatch,
			// unpack NAME VAR: unpack a corpus file and set $VAR to its path.
			"unpack": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: unpack NAME VAR")
				}
				ts.Setenv(args[1], testdata.Unpack(t, args[0]))
			},
		},
		Condition: func(cond string) (bool, error) {
			if ok, known := toolCondition(cond); known {
				return ok, nil
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
