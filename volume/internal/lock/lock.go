package lock

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cryptvol/cryptvol/internal/filelock"
)

// ErrLocked is what a refused Acquire wraps: another holder has the file
// locked in a mode that excludes the one asked for.
var ErrLocked = errors.New("the volume is in use by another process")

// Holder describes a lock holder, as its record says.
type Holder struct {
	PID int `json:"pid"`
	// Command is what the holder is doing, e.g. "cryptvol put".
	Command string `json:"command,omitempty"`
	// MountPoint is set by a mount daemon: where the volume is mounted.
	MountPoint string    `json:"mount_point,omitempty"`
	Exclusive  bool      `json:"exclusive"`
	Path       string    `json:"path,omitempty"` // the file, absolute
	Since      time.Time `json:"since"`
}

// LockedError is the error of a refused Acquire. Holders are the records
// of the processes in the way, exclusive holders first; it is empty when
// none could be found (another user's process, or one that keeps none).
type LockedError struct {
	Path      string // the file as the refused caller named it
	Exclusive bool   // the refused caller wanted to write
	Holders   []Holder
}

func (e *LockedError) Unwrap() error { return ErrLocked }

func (e *LockedError) Error() string {
	if len(e.Holders) == 0 {
		return fmt.Sprintf("%s is in use by another process (one that left no record of itself: another user's, or another program's)", e.Path)
	}
	h := e.Holders[0]
	if h.MountPoint != "" {
		unmount := fmt.Sprintf("'cryptvol unmount %s'", h.MountPoint)
		switch {
		case !h.Exclusive:
			return fmt.Sprintf("%s is mounted read-only at %s by PID %d: unmount it first (%s)", e.Path, h.MountPoint, h.PID, unmount)
		case e.Exclusive:
			return fmt.Sprintf("%s is mounted at %s by PID %d: write to it through the mount, or unmount it first (%s)", e.Path, h.MountPoint, h.PID, unmount)
		default:
			return fmt.Sprintf("%s is mounted at %s by PID %d: use the files there, or unmount it first (%s)", e.Path, h.MountPoint, h.PID, unmount)
		}
	}
	who := fmt.Sprintf("%s (PID %d)", orUnknown(h.Command), h.PID)
	if n := len(e.Holders) - 1; n > 0 && !h.Exclusive {
		who += fmt.Sprintf(" and %d other process", n)
		if n > 1 {
			who += "es"
		}
	}
	verb := "being written"
	if !h.Exclusive {
		verb = "being read"
	}
	return fmt.Sprintf("%s is %s by %s: try again when it has finished", e.Path, verb, who)
}

func orUnknown(s string) string {
	if s == "" {
		return "another program"
	}
	return s
}

// identity is what this process writes in its records.
var identity struct {
	sync.Mutex
	command, mountPoint string
}

// SetIdentity says what this process is doing, for the records other
// processes read when it holds a lock they want: command such as
// "cryptvol put" (the default is the program's file name), and for a mount
// daemon the mount point. It applies to locks taken afterwards.
func SetIdentity(command, mountPoint string) {
	identity.Lock()
	defer identity.Unlock()
	identity.command, identity.mountPoint = command, mountPoint
}

func currentIdentity() (string, string) {
	identity.Lock()
	defer identity.Unlock()
	cmd := identity.command
	if cmd == "" {
		cmd = strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	}
	return cmd, identity.mountPoint
}

// Lock is a held lock (or, with Warning set, the note that none could be
// taken on this file).
type Lock struct {
	// Warning is set when the file's filesystem has no locks: the file is
	// open but unprotected.
	Warning string
	unlock  func()
	record  string
	once    sync.Once
}

// lookFor is how long a refused Acquire waits for the holder's record to
// appear (it writes it just after locking), retrying the lock meanwhile.
const lookFor = 250 * time.Millisecond

// Acquire locks f, opened from path, without waiting: shared when
// exclusive is false, exclusive otherwise. A conflicting holder makes it
// fail with a *LockedError. The lock lasts until Release or until f is
// closed; call Release first, which also removes the holder record.
func Acquire(f *os.File, path string, exclusive bool) (*Lock, error) {
	deadline := time.Now().Add(lookFor)
	for {
		unlock, err := filelock.TryLock(f, exclusive, filelock.Primary)
		switch {
		case err == nil:
			l := &Lock{unlock: unlock}
			l.record = writeRecord(f, path, exclusive)
			return l, nil
		case errors.Is(err, filelock.ErrNoLocks):
			return &Lock{
				unlock:  func() {},
				Warning: fmt.Sprintf("the filesystem of %s does not support file locks: nothing stops another process from writing it at the same time", path),
			}, nil
		case !errors.Is(err, filelock.ErrBusy):
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		hs := conflicting(f, exclusive)
		if len(hs) > 0 || time.Now().After(deadline) {
			return nil, &LockedError{Path: path, Exclusive: exclusive, Holders: hs}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Release removes the holder record and unlocks. It is safe to call more
// than once and on a nil Lock.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		if l.record != "" {
			os.Remove(l.record)
		}
		l.unlock()
	})
}

// RecordDir is the directory of holder records: "locks" in the per-user
// runtime directory that cryptvol's mount table also uses
// ($CRYPTVOL_RUNTIME_DIR; /run/cryptvol for root; $XDG_RUNTIME_DIR/cryptvol;
// else a per-user directory under the temporary directory).
func RecordDir() string { return filepath.Join(runtimeDir(), "locks") }

func runtimeDir() string {
	if d := os.Getenv("CRYPTVOL_RUNTIME_DIR"); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
			return "/run/cryptvol"
		}
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "cryptvol")
	}
	if uid := os.Getuid(); uid >= 0 {
		return filepath.Join(os.TempDir(), "cryptvol-"+strconv.Itoa(uid))
	}
	return filepath.Join(os.TempDir(), "cryptvol") // Windows: TEMP is per user
}

var recordSeq atomic.Uint64

// writeRecord records this process as a holder of f's lock and clears
// records the lock proves stale. It returns the record's path, or "" when
// none could be written (the lock holds all the same).
func writeRecord(f *os.File, path string, exclusive bool) string {
	id, err := fileID(f)
	if err != nil {
		return ""
	}
	dir := RecordDir()
	if err := os.MkdirAll(dir, 0o700); err != nil || !privateDir(filepath.Dir(dir)) || !privateDir(dir) {
		return ""
	}
	for _, r := range readRecords(dir, id) {
		// Holding the lock exclusively, no one else can; holding it
		// shared, no one holds it exclusively.
		if exclusive || r.h.Exclusive || !processAlive(r.h.PID) {
			os.Remove(r.file)
		}
	}
	sweep(dir)
	cmd, mp := currentIdentity()
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	h := Holder{PID: os.Getpid(), Command: cmd, MountPoint: mp, Exclusive: exclusive, Path: abs, Since: time.Now().Round(time.Second)}
	data, err := json.Marshal(h)
	if err != nil {
		return ""
	}
	name := filepath.Join(dir, fmt.Sprintf("%s.%d.%d.json", id, h.PID, recordSeq.Add(1)))
	tmp, err := os.CreateTemp(dir, ".record-*")
	if err != nil {
		return ""
	}
	_, err = tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return ""
	}
	return name
}

// sweep removes the records of dead processes for every file, so that
// those of files nobody opens again (a deleted temporary volume, say) do
// not pile up after crashes.
func sweep(dir string) {
	for _, r := range readRecords(dir, "*") {
		if !processAlive(r.h.PID) {
			os.Remove(r.file)
		}
	}
}

type record struct {
	file string
	h    Holder
}

func readRecords(dir, id string) []record {
	names, _ := filepath.Glob(filepath.Join(dir, id+".*.json"))
	var out []record
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		var h Holder
		if json.Unmarshal(data, &h) != nil || h.PID <= 0 {
			continue
		}
		out = append(out, record{name, h})
	}
	return out
}

// conflicting returns the live holders of f's lock that exclude a lock of
// the mode asked for; records of dead processes are removed.
func conflicting(f *os.File, exclusive bool) []Holder {
	id, err := fileID(f)
	if err != nil {
		return nil
	}
	var out []Holder
	for _, r := range readRecords(RecordDir(), id) {
		if !processAlive(r.h.PID) {
			os.Remove(r.file)
			continue
		}
		if exclusive || r.h.Exclusive {
			out = append(out, r.h)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Exclusive != out[j].Exclusive {
			return out[i].Exclusive
		}
		return out[i].Since.Before(out[j].Since)
	})
	return out
}
