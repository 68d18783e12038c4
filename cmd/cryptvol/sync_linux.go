package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncFiles makes the files get -r wrote durable: one syncfs of the
// filesystem holding dest (what sync(1) -f does) instead of an fsync per
// file.
func syncFiles(dest string, files []string) error {
	if len(files) == 0 {
		return nil
	}
	d, err := os.Open(dest)
	if err != nil {
		return err
	}
	defer d.Close()
	return unix.Syncfs(int(d.Fd()))
}
