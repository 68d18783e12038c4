package mount

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Available reports whether FUSE can be used here: nil, or an error
// wrapping ErrNoFUSE (or ErrNotSupported) that says what is missing.
func Available() error {
	if err := Supported(); err != nil {
		return err
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return fmt.Errorf("%w: /dev/fuse is missing (load the fuse module; in a container, pass --device /dev/fuse)", ErrNoFUSE)
	}
	if os.Geteuid() != 0 {
		if _, err := fusermount(); err != nil {
			return fmt.Errorf("%w: mounting without root needs fusermount3 (install fuse3)", ErrNoFUSE)
		}
		// fusermount3 is setuid root but opens /dev/fuse with the
		// user's own file permissions, so the device must be open to
		// users: udev makes it 0666 on a standard system; a machine or
		// container without udev may leave it 0600.
		if err := unix.Access("/dev/fuse", unix.R_OK|unix.W_OK); err != nil {
			return fmt.Errorf("%w: /dev/fuse is not open to this user (%v); fusermount3 needs it read-write for users, as udev sets it (as root: chmod 0666 /dev/fuse)", ErrNoFUSE, err)
		}
	}
	return nil
}

func fusermount() (string, error) {
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		for _, dir := range []string{"/bin", "/usr/bin"} {
			if p := dir + "/" + name; isExecutable(p) {
				return p, nil
			}
		}
	}
	return "", errors.New("fusermount3 not found")
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Unmount unmounts the FUSE (or other) filesystem at dir: with umount(2)
// as root, else with fusermount3 -u. lazy detaches a busy mount (MNT_DETACH,
// fusermount3 -z): it disappears from the tree at once and ends when its
// last open file closes. Errors wrap ErrBusy or ErrNotMounted where they
// mean that.
func Unmount(dir string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = unix.MNT_DETACH
		}
		return unmountError(dir, unix.Unmount(dir, flags))
	}
	bin, err := fusermount()
	if err != nil {
		return fmt.Errorf("unmounting %s: %w", dir, err)
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command(bin, append(args, dir)...).CombinedOutput()
	if err == nil {
		return nil
	}
	msg := strings.TrimSpace(string(out))
	switch {
	case strings.Contains(msg, "busy"):
		return fmt.Errorf("unmounting %s: %w", dir, ErrBusy)
	case strings.Contains(msg, "not found"), strings.Contains(msg, "not mounted"), strings.Contains(msg, "Invalid argument"):
		return fmt.Errorf("%s: %w", dir, ErrNotMounted)
	}
	return fmt.Errorf("unmounting %s: %s: %v", dir, msg, err)
}

// MountPoint is one line of the system's mount table.
type MountPoint struct {
	Dir    string // where it is mounted
	FSType string // "fuse.cryptvol", "ext4", ...
	Source string // the device or FsName
	Dev    string // "MAJ:MIN" (Linux); its minor names a FUSE connection
}

// MountPoints lists the mounts this process can see.
func MountPoints() ([]MountPoint, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return parseMountInfo(data), nil
}

// parseMountInfo reads /proc/self/mountinfo lines: "ID PARENT MAJ:MIN ROOT
// MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
func parseMountInfo(data []byte) []MountPoint {
	var out []MountPoint
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(f) {
			continue
		}
		out = append(out, MountPoint{Dir: unescapeOctal(f[4]), FSType: f[sep+1], Source: unescapeOctal(f[sep+2]), Dev: f[2]})
	}
	return out
}

// unescapeOctal undoes the kernel's \ooo escapes of spaces, tabs,
// newlines and backslashes in mount table fields.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ProcessAlive reports whether pid is a running (not zombie) process.
// A process is gone only when every one of its threads is: after SIGKILL
// its first thread can be a zombie while others still finish a system
// call (an fsync of the volume on a busy disk), and until the last one
// ends the process keeps its files open, the volume and its lock with
// them.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	// A zombie (exited, not yet reaped: its parent may be gone and PID 1
	// in a container may not reap) answers kill(0) but is dead.
	dir := "/proc/" + strconv.Itoa(pid)
	if alive, zombie := taskState(dir + "/stat"); !zombie {
		return alive
	}
	tasks, err := os.ReadDir(dir + "/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		if alive, _ := taskState(dir + "/task/" + t.Name() + "/stat"); alive {
			return true
		}
	}
	return false
}

// taskState reads the state in a /proc stat file. A file that is gone is
// a dead task, one that cannot be read otherwise a live one.
func taskState(stat string) (alive, zombie bool) {
	b, err := os.ReadFile(stat)
	if err != nil {
		return !os.IsNotExist(err), false
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		z := b[i+2] == 'Z' || b[i+2] == 'X'
		return !z, z
	}
	return true, false
}

// redirectStderr points file descriptor 2 at f, so that even a crash
// report of a daemon lands in its log.
func redirectStderr(f *os.File) error {
	return unix.Dup3(int(f.Fd()), 2, 0)
}

// readOnlyMountFlags are the mount(2) flags of a read-only FUSE mount made
// directly as root (fusermount3's defaults plus read-only).
func readOnlyMountFlags() uintptr { return unix.MS_NOSUID | unix.MS_NODEV | unix.MS_RDONLY }

// SyncAll asks the kernel to write every dirty buffer of every filesystem
// (sync(2)): before detaching a loop mount that is busy.
func SyncAll() { unix.Sync() }

// tuneReadAhead raises the kernel's read-ahead for the FUSE mount at dir
// from 128 KiB to MaxIO, so that sequential reads arrive in requests as
// large as writes do. The FUSE protocol cannot ask for more than 128 KiB;
// the mount's backing-device setting in sysfs can, for root. Failing is
// harmless: reads just come in smaller pieces.
func tuneReadAhead(dir string) {
	if os.Geteuid() != 0 {
		return
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(uint64(st.Dev)), unix.Minor(uint64(st.Dev)))
	os.WriteFile(p, []byte(strconv.Itoa(MaxIO>>10)), 0)
}

// closeFUSEOnExec marks every /dev/fuse descriptor of this process
// close-on-exec. go-fuse's direct mount (as root) opens /dev/fuse without
// O_CLOEXEC, so the driver cryptvol starts next (ntfs-3g on the raw file)
// inherited the raw file's connection: when cryptvol died, that connection
// still had an open descriptor, the kernel did not abort it, and the
// driver's read of the raw file waited in D state for ever, its own mount
// hanging every stat (issue 25, item 4).
func closeFUSEOnExec() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if t, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && t == "/dev/fuse" {
			unix.CloseOnExec(fd)
		}
	}
}
