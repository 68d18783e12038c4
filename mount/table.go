package mount

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Mode names how a volume is mounted.
const (
	ModeFiles = "files" // the FAT filesystem through FUSE
	ModeRaw   = "raw"   // DIR/volume, the decrypted data area
	ModeLoop  = "loop"  // the raw file on a loop device, mounted by the kernel
	// ModeWebDAV is 'cryptvol serve --webdav': no mount, the files served
	// over WebDAV; MountPoint is the URL.
	ModeWebDAV = "webdav"
	// ModeNFS is 'cryptvol serve --nfs' and 'mount --via nfs': MountPoint
	// is the URL.
	ModeNFS = "nfs"
	// ModeWinFsp is a mount through mount/cgofs (WinFsp).
	ModeWinFsp = "winfsp"
)

// Entry describes one cryptvol mount, as its daemon recorded it.
type Entry struct {
	PID        int       `json:"pid"`
	Volume     string    `json:"volume"`
	MountPoint string    `json:"mountpoint"`
	Mode       string    `json:"mode"`
	ReadOnly   bool      `json:"read_only"`
	Format     string    `json:"format,omitempty"`
	Hidden     bool      `json:"hidden,omitempty"`
	RawFile    string    `json:"raw_file,omitempty"`    // raw and loop: the FUSE file
	AuxDir     string    `json:"aux_dir,omitempty"`     // loop: the private FUSE mount
	LoopDevice string    `json:"loop_device,omitempty"` // loop: /dev/loopN
	FSType     string    `json:"fstype,omitempty"`      // loop: the kernel's filesystem
	Log        string    `json:"log,omitempty"`         // the daemon's log file
	Started    time.Time `json:"started"`
	// Error is set by a daemon that could not finish cleanly.
	Error string `json:"error,omitempty"`
	// Alive is computed when reading: the daemon process is running.
	Alive bool `json:"alive"`
	// Mounted is computed when reading: the mount point is in the
	// system's mount table.
	Mounted bool `json:"mounted"`
}

// Table is the directory of mount records: one small JSON file per daemon,
// named by its process id, so daemons never contend for one file.
type Table struct {
	Dir string
}

// DefaultTable is where this user's mounts are recorded:
// $CRYPTVOL_RUNTIME_DIR if set; /run/cryptvol for root;
// $XDG_RUNTIME_DIR/cryptvol; else a per-user directory in the temporary
// directory.
func DefaultTable() Table {
	if d := os.Getenv("CRYPTVOL_RUNTIME_DIR"); d != "" {
		return Table{Dir: d}
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
			return Table{Dir: "/run/cryptvol"}
		}
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return Table{Dir: filepath.Join(d, "cryptvol")}
	}
	return Table{Dir: filepath.Join(os.TempDir(), "cryptvol-"+strconv.Itoa(os.Getuid()))}
}

func (t Table) file(pid int) string { return filepath.Join(t.Dir, strconv.Itoa(pid)+".json") }

// LogPath is where daemon pid writes its log.
func (t Table) LogPath(pid int) string { return filepath.Join(t.Dir, strconv.Itoa(pid)+".log") }

// AuxDir is the private mount point of daemon pid's raw file in loop mode.
func (t Table) AuxDir(pid int) string { return filepath.Join(t.Dir, "aux-"+strconv.Itoa(pid)) }

// Init creates the directory (private to the user).
func (t Table) Init() error {
	if err := os.MkdirAll(t.Dir, 0o700); err != nil {
		return fmt.Errorf("mount table: %w", err)
	}
	return nil
}

// Put records e (replacing the record of the same PID), atomically.
func (t Table) Put(e Entry) error {
	if err := t.Init(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(t.Dir, ".entry-*")
	if err != nil {
		return fmt.Errorf("mount table: %w", err)
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), t.file(e.PID))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("mount table: %w", err)
	}
	return nil
}

// Remove deletes the record of pid, its private mount directory (if
// empty) and its log if the log is empty (a log with messages is kept for
// the user to read).
func (t Table) Remove(pid int) {
	os.Remove(t.file(pid))
	if fi, err := os.Stat(t.LogPath(pid)); err == nil && fi.Size() == 0 {
		os.Remove(t.LogPath(pid))
	}
	os.Remove(t.AuxDir(pid))
}

// Entries reads every record, sorted by mount point, with Alive and
// Mounted filled in. Records that are neither (the daemon is gone and so is
// its mount) are deleted and not returned.
func (t Table) Entries() ([]Entry, error) {
	names, err := filepath.Glob(filepath.Join(t.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	mounted := map[string]bool{}
	if mps, err := MountPoints(); err == nil {
		for _, mp := range mps {
			mounted[mp.Dir] = true
		}
	}
	var out []Entry
	for _, name := range names {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(name), ".json"))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		var e Entry
		if err := json.Unmarshal(data, &e); err != nil || e.PID != pid {
			continue
		}
		e.Alive = ProcessAlive(pid)
		e.Mounted = mounted[e.MountPoint] || (e.AuxDir != "" && mounted[e.AuxDir])
		if !e.Alive && !e.Mounted && e.Error == "" {
			t.Remove(pid)
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MountPoint < out[j].MountPoint })
	return out, nil
}

// ErrNoEntry means no recorded mount matches.
var ErrNoEntry = errors.New("no cryptvol mount there")

// Find returns the record whose mount point (or, failing that, volume)
// is path.
func (t Table) Find(path string) (Entry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Entry{}, err
	}
	es, err := t.Entries()
	if err != nil {
		return Entry{}, err
	}
	for _, e := range es {
		if e.MountPoint == abs {
			return e, nil
		}
	}
	for _, e := range es {
		if e.Volume == abs {
			return e, nil
		}
	}
	return Entry{}, fmt.Errorf("%s: %w", path, ErrNoEntry)
}

// IsMountPoint reports whether dir is in the system's mount table, and as
// what.
func IsMountPoint(dir string) (MountPoint, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return MountPoint{}, false
	}
	mps, err := MountPoints()
	if err != nil {
		return MountPoint{}, false
	}
	found, ok := MountPoint{}, false
	for _, mp := range mps {
		if mp.Dir == abs {
			// The last one listed is the one on top.
			found, ok = mp, true
		}
	}
	return found, ok
}
