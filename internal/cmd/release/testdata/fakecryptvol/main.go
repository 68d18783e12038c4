// Command fakecryptvol prints what `cryptvol version` prints first, for the
// release builder's tests: building it is seconds, building cryptvol
// itself for a foreign target is a minute.
package main

import (
	"fmt"
	"os"
	"runtime"
)

var (
	version  = "dev"
	commit   = ""
	modified = ""
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != "version" {
		fmt.Fprintln(os.Stderr, "usage: fakecryptvol version")
		os.Exit(1)
	}
	c := commit
	if modified == "true" {
		c += " (modified)"
	}
	fmt.Printf("cryptvol %s\ncommit %s\n%s %s/%s\n", version, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
