package fsops

import (
	"errors"
	"fmt"
	"path"
)

// Remove removes the files paths name, and directories with everything
// in them where recursive.
func Remove(t Target, paths []string, recursive bool) error {
	for _, p := range paths {
		p = volPath(p)
		if p == "/" {
			return kind(BadUsage, errors.New("refusing to remove the root directory"))
		}
		st, err := t.Stat(p)
		if err != nil {
			return err
		}
		if st.IsDir() {
			if !recursive {
				return kind(BadUsage, fmt.Errorf("%s is a directory (use -r)", p))
			}
			err = t.RemoveAll(p)
		} else {
			err = t.Remove(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Mkdir makes the directories paths name, with their missing parents
// where parents (an existing directory is then no error). Every name is
// checked against the filesystem's rule before any is made.
func Mkdir(t Target, paths []string, parents bool) error {
	for _, p := range paths {
		if err := checkPathNames(t.Type(), p); err != nil {
			return err
		}
	}
	for _, p := range paths {
		var err error
		if parents {
			err = t.MkdirAll(volPath(p))
		} else {
			err = t.Mkdir(volPath(p))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Move renames src to dst, or into dst when that is a directory; an
// existing file there is replaced only where force. The caller refuses a
// move of a directory into itself (before opening the volume).
func Move(t Target, src, dst string, force bool) error {
	if _, err := t.Stat(src); err != nil {
		return err
	}
	if err := checkPathNames(t.Type(), dst); err != nil {
		return err
	}
	if st, err := t.Stat(dst); err == nil {
		if st.IsDir() {
			dst = path.Join(dst, path.Base(src))
			if dst == src {
				return kind(BadOperand, fmt.Errorf("%s is already in %s", src, path.Dir(dst)))
			}
			if _, err := t.Stat(dst); err == nil && !force {
				return kind(WouldDestroy, fmt.Errorf("%s exists (use --force to replace it)", dst))
			}
		} else if !force {
			return kind(WouldDestroy, fmt.Errorf("%s exists (use --force to replace it)", dst))
		}
	}
	return t.Rename(src, dst)
}
