//go:build !(linux && (amd64 || arm64))

package main

import (
	"errors"
	"fmt"
	"os"
)

// killAt is the test program killat (see killat_linux_test.go), which
// needs ptrace as Linux on amd64 or arm64 has it.
func killAt() int {
	fmt.Fprintln(os.Stderr, "killat:", killAtSupported())
	return 1
}

type killAtReport struct {
	Calls  int64    `json:"calls"`
	Killed bool     `json:"killed"`
	Call   string   `json:"call"`
	Trace  []string `json:"trace,omitempty"`
}

func killAtSupported() error {
	return errors.New("killing at a write call needs ptrace on Linux (amd64, arm64)")
}
