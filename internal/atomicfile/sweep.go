package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Leftover is a temporary file of an interrupted run found by a sweep.
type Leftover struct {
	Path    string // the file, below the directory swept
	PID     int    // the process that made it; 0 if its name does not say
	Removed bool   // true if the sweep removed it
	Err     error  // why it could not be removed, if it was to be
	Reason  string // why it was left alone, when it was
}

func (l Leftover) String() string {
	switch {
	case l.Removed:
		return fmt.Sprintf("removed %s, left by an interrupted cryptvol (process %d, no longer running)", l.Path, l.PID)
	case l.Err != nil:
		return fmt.Sprintf("could not remove %s, left by an interrupted cryptvol (process %d, no longer running): %v", l.Path, l.PID, l.Err)
	}
	return fmt.Sprintf("left %s alone: %s", l.Path, l.Reason)
}

// Sweep removes from dir the temporary files of this package whose owner
// is no longer running, and reports them and those it cannot decide
// about (see Leftover). Files a running process holds are not touched
// and not reported.
func Sweep(dir string) []Leftover {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	return sweep(root, ".")
}

// SweepOnce is Sweep the first time this process asks for dir, and
// nothing after: for callers that open files in a directory again and
// again (a server opening an archive per request), where reading a large
// directory each time would cost more than the open.
func SweepOnce(dir string) []Leftover {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	if !firstVisit(root, ".") {
		return nil
	}
	return sweep(root, ".")
}

// SweepIn is Sweep for the directory dir (relative) inside root.
func SweepIn(root *os.Root, dir string) []Leftover {
	return sweep(root, filepath.FromSlash(dir))
}

func sweep(root *os.Root, dir string) []Leftover {
	d, err := root.Open(dir)
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	sort.Strings(names)
	var out []Leftover
	shown := func(name string) string {
		return filepath.Join(root.Name(), dir, name)
	}
	for _, n := range names {
		pid, start, ok := parseTempName(n)
		if !ok {
			if legacyRE.MatchString(n) {
				if st, err := root.Lstat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
					out = append(out, Leftover{Path: shown(n),
						Reason: "it looks like the temporary file of an interrupted run of an older cryptvol (its name does not say which process made it); remove it if no cryptvol is running"})
				}
			}
			continue
		}
		if l, report := sweepOne(root, filepath.Join(dir, n), pid, start); report {
			l.Path = shown(n)
			out = append(out, l)
		}
	}
	return out
}

// sweepOne decides about one temporary file, removing it if its owner is
// gone. report says whether the result is worth telling.
func sweepOne(root *os.Root, name string, pid int, start string) (Leftover, bool) {
	l := Leftover{PID: pid}
	if p, s := selfOwner(); p == pid && s == start {
		return l, false // this process's own
	}
	st, err := root.Lstat(name)
	if err != nil {
		return l, false // gone meanwhile
	}
	if !st.Mode().IsRegular() {
		l.Reason = "not a regular file (cryptvol's temporary files are)"
		return l, true
	}
	f, err := root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		l.Reason = fmt.Sprintf("cannot check whether process %d still writes it: %v", pid, err)
		return l, true
	}
	if fst, err := f.Stat(); err != nil || !os.SameFile(st, fst) {
		f.Close()
		return l, false // replaced meanwhile: look again next time
	}
	held := lockHeld(f)
	f.Close()
	if held {
		return l, false // a running cryptvol is writing it
	}
	alive, sure := ownerAlive(pid, start)
	switch {
	case alive && sure:
		return l, false // its owner runs (between creating and locking it, or on a filesystem without locks)
	case alive:
		l.Reason = fmt.Sprintf("process %d is running and may still write it; if that is not a cryptvol, remove the file", pid)
		return l, true
	}
	if err := root.Remove(name); err != nil && !os.IsNotExist(err) {
		l.Err = err
		return l, true
	}
	l.Removed = true
	return l, true
}
