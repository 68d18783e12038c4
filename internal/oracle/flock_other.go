//go:build !unix

package oracle

import (
	"errors"
	"os"
)

// flock is never reached: Find refuses every platform but linux/amd64.
func flock(*os.File) error { return errors.New("the VeraCrypt oracles run on Linux only") }
