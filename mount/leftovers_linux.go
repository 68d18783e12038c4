package mount

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// A write through a stacked driver keeps two private mounts in a
// directory of its own, PrivateDirPrefix<pid>-<random> under the temporary
// directory: raw (the decrypted volume, served by cryptvol's helper
// process, whose pid is in the name) and files (the driver's mount of it).
// As root they live in the helper's own mount namespace; otherwise they
// are in the shared table, and a helper killed with SIGKILL cannot take
// them down. (Before the helper, the command served the raw file itself
// and, killed while one of its threads waited on the driver, stayed a
// zombie with a thread in D state, every stat of the mounts hanging: issue
// 25, item 4.) CleanPrivateMounts, run by every command, finds such
// leftovers and takes them down so that nothing blocks.

// PrivateDirPrefix begins the name of a command's private mount directory;
// the owner's process id follows it.
const PrivateDirPrefix = "cryptvol-write-"

// PrivateDirPattern is the os.MkdirTemp pattern of this process's private
// mount directory: the pid in the name tells the next command whether its
// owner still lives.
func PrivateDirPattern() string { return fmt.Sprintf("%s%d-", PrivateDirPrefix, os.Getpid()) }

// CleanPrivateMounts detaches the private mounts below tmp (normally
// os.TempDir()) whose owning process is gone (or a zombie), and removes
// their directories. It returns the directories it cleaned. It never stats
// a mount point: the mount table says what is mounted, and the FUSE
// connection is aborted by its number, so a dead server cannot make it
// hang.
func CleanPrivateMounts(tmp string) []string {
	mps, err := MountPoints()
	if err != nil {
		return nil
	}
	stale := map[string][]MountPoint{}
	for _, mp := range mps {
		dir := filepath.Dir(mp.Dir)
		if filepath.Dir(dir) != filepath.Clean(tmp) {
			continue
		}
		if b := filepath.Base(mp.Dir); b != "raw" && b != "files" {
			continue
		}
		pid, ok := privateDirOwner(filepath.Base(dir))
		if !ok || processLives(pid) {
			continue
		}
		stale[dir] = append(stale[dir], mp)
	}
	var cleaned []string
	if len(stale) > 0 {
		ensureFusectl()
	}
	for dir, list := range stale {
		// The driver first: aborting its connection answers a dead
		// client's waiting thread; then the raw file's, which answers the
		// driver. Without root fusectl is closed, and killing the driver
		// (ours, by its command line) closes both.
		for _, name := range []string{"files", "raw"} {
			for _, mp := range list {
				if filepath.Base(mp.Dir) == name && strings.HasPrefix(mp.FSType, "fuse") {
					abortFUSE(mp.Dev)
				}
			}
		}
		killDrivers(dir)
		for _, name := range []string{"files", "raw"} {
			for _, mp := range list {
				if filepath.Base(mp.Dir) == name {
					Unmount(mp.Dir, true)
				}
			}
		}
		os.Remove(filepath.Join(dir, "files"))
		os.Remove(filepath.Join(dir, "raw"))
		os.Remove(dir)
		cleaned = append(cleaned, dir)
	}
	cleaned = append(cleaned, cleanDeadAux(mps)...)
	// The mounts of a helper in a mount namespace of its own are not in
	// this table; if it died (SIGKILL) with the command, its driver may
	// still run there, serving errors from a dead raw file, and its
	// directories stay behind. A driver that outlived its directory's
	// owner is killed; an empty directory of a dead owner goes.
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		pid, ok := privateDirOwner(e.Name())
		dir := filepath.Join(tmp, e.Name())
		if !ok || !e.IsDir() || processLives(pid) || mountedBelow(mps, dir) {
			continue
		}
		killDrivers(dir)
		os.Remove(filepath.Join(dir, "files"))
		os.Remove(filepath.Join(dir, "raw"))
		if os.Remove(dir) == nil && len(stale[dir]) == 0 {
			cleaned = append(cleaned, dir)
		}
	}
	return cleaned
}

// mountedBelow reports whether the table has a mount inside dir.
func mountedBelow(mps []MountPoint, dir string) bool {
	for _, mp := range mps {
		if strings.HasPrefix(mp.Dir, dir+"/") {
			return true
		}
	}
	return false
}

// privateDirOwner reads the pid from a private directory's name.
func privateDirOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, PrivateDirPrefix)
	if !ok {
		return 0, false
	}
	i := strings.IndexByte(rest, '-')
	if i <= 0 {
		return 0, false
	}
	pid, err := strconv.Atoi(rest[:i])
	return pid, err == nil && pid > 0
}

// processLives reports whether pid is a running process (a zombie is not:
// it is the killed command whose thread waits in D state).
func processLives(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	return s[i+2] != 'Z' && s[i+2] != 'X'
}

// abortFUSE aborts the FUSE connection of device dev ("0:N") through
// fusectl (root only; a no-op otherwise).
func abortFUSE(dev string) {
	_, minor, ok := strings.Cut(dev, ":")
	if !ok {
		return
	}
	os.WriteFile("/sys/fs/fuse/connections/"+minor+"/abort", []byte("1"), 0)
}

// killDrivers kills the driver processes (this user's) whose command line
// names a file below dir.
func killDrivers(dir string) {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, arg := range strings.Split(string(b), "\x00") {
			if strings.HasPrefix(arg, dir+"/") {
				syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}

// ensureFusectl mounts fusectl where the system has not (as root; it is
// the only way to abort a connection whose server is dead but not gone).
func ensureFusectl() {
	const dir = "/sys/fs/fuse/connections"
	if os.Geteuid() != 0 {
		return
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return
	}
	syscall.Mount("none", dir, "fusectl", 0, "")
}

// cleanDeadAux takes down the private raw mounts (the mount table's
// aux-PID directories) of `cryptvol mount` daemons that were killed: the
// driver on top ends by itself (it gets SIGTERM when its daemon dies, see
// driverProcAttr), but the raw mount of the dead daemon stays, answering
// ENOTCONN. Its driver, if it still runs, is killed and its mount point
// detached as well.
func cleanDeadAux(mps []MountPoint) []string {
	t := DefaultTable()
	var cleaned []string
	for _, mp := range mps {
		if filepath.Dir(mp.Dir) != filepath.Clean(t.Dir) || !strings.HasPrefix(mp.FSType, "fuse") {
			continue
		}
		rest, ok := strings.CutPrefix(filepath.Base(mp.Dir), "aux-")
		pid, err := strconv.Atoi(rest)
		if !ok || err != nil || pid <= 0 || processLives(pid) {
			continue
		}
		ensureFusectl()
		for _, top := range mps {
			if top.Source == filepath.Join(mp.Dir, RawFileName) && strings.HasPrefix(top.FSType, "fuse") {
				abortFUSE(top.Dev)
				Unmount(top.Dir, true)
			}
		}
		abortFUSE(mp.Dev)
		killDrivers(mp.Dir)
		Unmount(mp.Dir, true)
		os.Remove(mp.Dir)
		cleaned = append(cleaned, mp.Dir)
	}
	return cleaned
}
