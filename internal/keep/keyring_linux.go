//go:build linux

package keep

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
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

// descPrefix starts the description of every entry key.
const descPrefix = "cryptvol:"

// keyring keeps entries as "user" keys in a keyring of the user keyring.
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
	return fmt.Sprintf("the kernel keyring (keyring %q of your user keyring)", k.name)
}

// ring finds the keyring, creating it when create is set; 0 and no error
// when it does not exist.
func (k *keyring) ring(create bool) (int, error) {
	id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "keyring", k.name, 0)
	if err == nil {
		if create {
			// A keyring made by an earlier cryptvol has possessor bits:
			// take them away before anything new goes into it.
			if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, id, keyPerm, 0, 0); err != nil {
				return 0, fmt.Errorf("keyring %q: setting permissions: %w", k.name, err)
			}
		}
		return id, nil
	}
	if !gone(err) {
		return 0, fmt.Errorf("searching the user keyring: %w", err)
	}
	if !create {
		return 0, nil
	}
	id, err = unix.AddKey("keyring", k.name, nil, unix.KEY_SPEC_USER_KEYRING)
	if err != nil {
		return 0, fmt.Errorf("creating keyring %q: %w", k.name, err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, id, keyPerm, 0, 0); err != nil {
		return 0, fmt.Errorf("keyring %q: setting permissions: %w", k.name, err)
	}
	return id, nil
}

// gone reports the errors of a key that does not exist (any more).
func gone(err error) bool {
	return errors.Is(err, unix.ENOKEY) || errors.Is(err, unix.EKEYEXPIRED) || errors.Is(err, unix.EKEYREVOKED)
}

func desc(id volume.FileID) string { return fmt.Sprintf("%s%x:%x", descPrefix, id.Dev, id.Ino) }

func (k *keyring) Put(e *Entry) error {
	ring, err := k.ring(true)
	if err != nil {
		return err
	}
	b, err := encode(e)
	if err != nil {
		return err
	}
	defer clear(b)
	// The kernel copies the payload; for "user" keys it frees it with
	// kfree_sensitive, which zeroes it.
	id, err := unix.AddKey("user", desc(e.File), b, ring)
	if err != nil {
		return fmt.Errorf("adding the key: %w", err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SETPERM, id, keyPerm, 0, 0); err != nil {
		unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
		return fmt.Errorf("setting the key's permissions: %w", err)
	}
	if _, err := unix.KeyctlInt(unix.KEYCTL_SET_TIMEOUT, id, timeoutSeconds(e.Expires), 0, 0); err != nil {
		unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
		return fmt.Errorf("setting the key's timeout: %w", err)
	}
	return nil
}

// find returns the key id of a file's entry, or 0.
func (k *keyring) find(fid volume.FileID) (int, error) {
	ring, err := k.ring(false)
	if err != nil || ring == 0 {
		return 0, err
	}
	id, err := unix.KeyctlSearch(ring, "user", desc(fid), 0)
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

// keys lists the ids of the entry keys in the keyring.
func (k *keyring) keys() ([]int, error) {
	ring, err := k.ring(false)
	if err != nil || ring == 0 {
		return nil, err
	}
	b, err := read(ring)
	if err != nil {
		return nil, fmt.Errorf("reading keyring %q: %w", k.name, err)
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
		if len(f) == 5 && f[0] == "user" && strings.HasPrefix(f[4], descPrefix) {
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

// RemoveKeyring removes the keyring of that name from the user keyring,
// with every entry in it.
func RemoveKeyring(name string) error {
	k := &keyring{name: name}
	id, err := k.ring(false)
	if err != nil || id == 0 {
		return err
	}
	k.DeleteAll()
	_, err = unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
	return err
}
