//go:build !linux

package main

import "os"

// syncFiles makes the files get -r wrote durable, one fsync each (there is
// no syncfs here).
func syncFiles(dest string, files []string) error {
	for _, p := range files {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
