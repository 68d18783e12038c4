//go:build linux

package keep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cryptvol/cryptvol/volume"
)

// Key permissions: everything for the owning user, nothing for anyone
// else — not even for a possessor (keyrings(7), "Permissions"). The kernel
// grants a process that possesses a key the possessor bits whatever its
// uid, and possession only takes a keyring link: a process that keeps a
// session keyring into which the user keyring was linked (keyctl link @u
// @s) and then changes to another uid still possesses every key below
// it. With possessor bits, that other uid could read the master keys
// (issue 29 item 1); with none, the owner reads them through the user bits
// and anybody else gets EACCES. Root can still read them, as it can read
// the memory of any process holding them.
const keyPerm = 0x003f0000

// keyring keeps entries as "user" keys directly in the user keyring, each
// described as NAME:DEV:INO, where NAME is "cryptvol" or $CRYPTVOL_KEYRING.
// There is no keyring of cryptvol's own in between: two commands that
// both found none and created it at once (add_key of a keyring cannot
// update, it displaces) lost the first one's keys (issue 29 item 13).
type keyring struct {
	name string
}

func openKeyring() (Store, error) {
	if _, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_USER_KEYRING, true); err != nil {
		return nil, fmt.Errorf("the kernel keyring is not available: %w", err)
	}
	name := os.Getenv("CRYPTVOL_KEYRING")
	if name == "" {
		name = "cryptvol"
	}
	return &keyring{name: name}, nil
}

func (k *keyring) Where() string {
	return fmt.Sprintf("the kernel keyring (keys %q in your user keyring)", k.name+":…")
}

// dropLegacyRing invalidates the keyring of this name that cryptvol
// versions before 0.x kept the keys in (and that granted possessors
// everything): those unlocks are locked, rather than left readable.
func (k *keyring) dropLegacyRing() {
	if id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "keyring", k.name, 0); err == nil {
		unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	}
}

// gone reports the errors of a key that does not exist (any more).
func gone(err error) bool {
	return errors.Is(err, unix.ENOKEY) || errors.Is(err, unix.EKEYEXPIRED) || errors.Is(err, unix.EKEYREVOKED)
}

func (k *keyring) desc(id volume.FileID) string {
	return fmt.Sprintf("%s:%x:%x", k.name, id.Dev, id.Ino)
}

// ours reports whether a key description is one of this store's entries.
func (k *keyring) ours(d string) bool {
	var dev, ino uint64
	rest, ok := strings.CutPrefix(d, k.name+":")
	if !ok {
		return false
	}
	n, err := fmt.Sscanf(rest, "%x:%x", &dev, &ino)
	return err == nil && n == 2 && fmt.Sprintf("%x:%x", dev, ino) == rest
}

func (k *keyring) Put(e *Entry) error {
	k.dropLegacyRing()
	b, err := encode(e)
	if err != nil {
		return err
	}
	defer clear(b)
	// The key is made in this thread's own keyring, which nobody else
	// possesses, and gets its permissions and timeout there; only then is
	// it linked into the user keyring, where the link atomically displaces
	// the entry it replaces. Added to the user keyring directly, it would
	// have the kernel's default permissions (read for every possessor)
	// until the SETPERM, and a reader could see a half-replaced entry.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// The kernel copies the payload; for "user" keys it frees it with
	// kfree_sensitive, which zeroes it.
	id, err := unix.AddKey("user", k.desc(e.File), b, unix.KEY_SPEC_THREAD_KEYRING)
	if err != nil {
		return fmt.Errorf("adding the key: %w", err)
	}
	defer unix.KeyctlInt(unix.KEYCTL_UNLINK, id, unix.KEY_SPEC_THREAD_KEYRING, 0, 0)
	fail := func(what string, err error) error {
		unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, id, keyPerm, 0, 0); err != nil {
		return fail("setting the key's permissions", err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SET_TIMEOUT, id, timeoutSeconds(e.Expires), 0, 0); err != nil {
		return fail("setting the key's timeout", err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_LINK, id, unix.KEY_SPEC_USER_KEYRING, 0, 0); err != nil {
		return fail("linking the key into the user keyring", err)
	}
	return nil
}

// find returns the key id of a file's entry, or 0.
func (k *keyring) find(fid volume.FileID) (int, error) {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", k.desc(fid), 0)
	if gone(err) {
		return 0, nil
	}
	return id, err
}

// read returns a key's payload; the caller wipes it.
func read(id int) ([]byte, error) {
	n, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, nil, 0)
	if err != nil {
		return nil, err
	}
	for {
		b := make([]byte, n)
		m, err := unix.KeyctlBuffer(unix.KEYCTL_READ, id, b, 0)
		if err != nil {
			clear(b)
			return nil, err
		}
		if m <= n {
			return b[:m], nil
		}
		clear(b)
		n = m // updated meanwhile: try again with the new size
	}
}

func (k *keyring) Get(fid volume.FileID) (*Entry, error) {
	id, err := k.find(fid)
	if err != nil {
		return nil, err
	}
	if id == 0 {
		return nil, ErrNotFound
	}
	b, err := read(id)
	if gone(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading the key: %w", err)
	}
	defer clear(b)
	return decode(b, true)
}

func (k *keyring) Delete(fid volume.FileID) (bool, error) {
	id, err := k.find(fid)
	if err != nil || id == 0 {
		return false, err
	}
	_, err = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	if gone(err) {
		return false, nil
	}
	return err == nil, err
}

// keys lists the ids of the entry keys in the user keyring.
func (k *keyring) keys() ([]int, error) {
	b, err := read(unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		return nil, fmt.Errorf("reading the user keyring: %w", err)
	}
	var ids []int
	for i := 0; i+4 <= len(b); i += 4 {
		id := int(int32(binary.NativeEndian.Uint32(b[i:])))
		d, err := unix.KeyctlString(unix.KEYCTL_DESCRIBE, id)
		if err != nil {
			continue // expired or gone meanwhile
		}
		// type;uid;gid;perm;description
		f := strings.SplitN(d, ";", 5)
		if len(f) == 5 && f[0] == "user" && k.ours(f[4]) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (k *keyring) List() ([]Entry, error) {
	ids, err := k.keys()
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, id := range ids {
		b, err := read(id)
		if err != nil {
			continue
		}
		e, err := decode(b, false)
		clear(b)
		if err == nil {
			out = append(out, *e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Expires.Before(out[j].Expires) })
	return out, nil
}

func (k *keyring) DeleteAll() (int, error) {
	ids, err := k.keys()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		if _, err := unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0); err == nil {
			n++
		}
	}
	return n, nil
}

// RemoveKeyring removes every entry of the store of that name (the keys
// NAME:… of the user keyring), and a keyring of that name left by an
// earlier version.
func RemoveKeyring(name string) error {
	k := &keyring{name: name}
	k.dropLegacyRing()
	_, err := k.DeleteAll()
	return err
}
