// Package keep holds unlocked volumes for later commands (`cryptvol
// unlock`): the encoded volume.Snapshot of each, under the FileID of its
// container, until it is locked or its timeout passes. Nothing secret is
// ever written to disk.
//
// On Linux the entries are keys in the kernel's key retention service:
// "user" keys named cryptvol:DEV:INO (or $CRYPTVOL_KEYRING:DEV:INO) in the
// user's keyring, each with its timeout set in the kernel, readable only
// by processes of the same uid (a possessor of another uid gets nothing). Elsewhere, and on Linux when the keyring system calls
// are refused (some containers filter them), a per-user agent holds them
// in memory: a re-executed cryptvol listening on a Unix socket (mode 0600)
// in a directory only its owner can enter (mode 0700), which exits once it
// holds nothing. On Windows the socket is an AF_UNIX socket in the user's
// local application data directory, which only that user can open.
package keep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/cryptvol/cryptvol/volume"
)

// Entry is one unlocked volume.
type Entry struct {
	// Volume is the container's absolute path when it was unlocked.
	Volume  string        `json:"volume"`
	File    volume.FileID `json:"file"`
	Format  string        `json:"format,omitempty"`
	Hidden  bool          `json:"hidden,omitempty"`
	Expires time.Time     `json:"expires"`
	// Secret is the encoded volume.Snapshot (the master keys). List
	// leaves it nil; Wipe clears it.
	Secret []byte `json:"-"`
}

// Wipe zeroes the secret.
func (e *Entry) Wipe() { clear(e.Secret) }

// Store keeps entries, one per container file.
type Store interface {
	// Put keeps e until e.Expires, replacing any entry of the same file.
	Put(e *Entry) error
	// Get returns the entry of a file, or an error wrapping ErrNotFound.
	Get(id volume.FileID) (*Entry, error)
	// Delete removes the entry of a file and reports whether there was one.
	Delete(id volume.FileID) (bool, error)
	// List returns every entry, without secrets, soonest to lock first.
	List() ([]Entry, error)
	// DeleteAll removes every entry and says how many there were.
	DeleteAll() (int, error)
	// Where describes the store for messages ("the kernel keyring").
	Where() string
}

// ErrNotFound: the volume is not unlocked (never was, locked, or timed out).
var ErrNotFound = errors.New("not unlocked")

// Options say which store to open.
type Options struct {
	// AgentPath and AgentArgs start the agent: the program to run and
	// its argument list, the program's name first (the CLI re-executes
	// itself, os.Executable(), as "cryptvol unlock-agent"). Without
	// AgentPath the agent store only reaches an agent that already runs.
	AgentPath string
	AgentArgs []string
}

// Open returns the store to use here: the kernel keyring where it works,
// else the agent. $CRYPTVOL_UNLOCK_STORE=keyring or agent forces one.
func Open(o Options) (Store, error) {
	switch v := os.Getenv("CRYPTVOL_UNLOCK_STORE"); v {
	case "keyring":
		return openKeyring()
	case "agent":
		return openAgent(o)
	case "":
	default:
		return nil, fmt.Errorf("CRYPTVOL_UNLOCK_STORE=%q: want keyring or agent", v)
	}
	if s, err := openKeyring(); err == nil {
		return s, nil
	}
	return openAgent(o)
}

// RuntimeDir is the per-user directory of the agent's socket (the one the
// mount table uses): $CRYPTVOL_RUNTIME_DIR if set; /run/cryptvol for root;
// $XDG_RUNTIME_DIR/cryptvol; on Windows the local application data
// directory; else a per-user directory in the temporary directory.
func RuntimeDir() string {
	if d := os.Getenv("CRYPTVOL_RUNTIME_DIR"); d != "" {
		return d
	}
	if runtime.GOOS == "windows" {
		if d, err := os.UserCacheDir(); err == nil {
			return filepath.Join(d, "cryptvol")
		}
	}
	if os.Geteuid() == 0 {
		if fi, err := os.Stat("/run"); err == nil && fi.IsDir() {
			return "/run/cryptvol"
		}
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "cryptvol")
	}
	return filepath.Join(os.TempDir(), "cryptvol-"+strconv.Itoa(os.Getuid()))
}

// encode lays an entry out as its JSON facts, a newline, and the secret.
func encode(e *Entry) ([]byte, error) {
	head, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(head)+1+len(e.Secret))
	b = append(b, head...)
	b = append(b, '\n')
	return append(b, e.Secret...), nil
}

// decode parses what encode made; withSecret copies the secret out of b.
func decode(b []byte, withSecret bool) (*Entry, error) {
	head, secret, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return nil, errors.New("keep: malformed entry")
	}
	var e Entry
	if err := json.Unmarshal(head, &e); err != nil {
		return nil, fmt.Errorf("keep: malformed entry: %v", err)
	}
	if withSecret {
		e.Secret = bytes.Clone(secret)
	}
	return &e, nil
}

// timeoutSeconds is the kernel's (and the agent's) whole-second timeout for
// an expiry time, at least one second.
func timeoutSeconds(expires time.Time) int {
	d := time.Until(expires)
	s := int((d + time.Second - 1) / time.Second)
	return max(1, s)
}
