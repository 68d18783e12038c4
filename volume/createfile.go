package volume

import (
	"errors"
	"os"
	"sync"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// CreateFile makes a new container file at path through a temporary file
// in the same directory (internal/atomicfile): sized to size bytes,
// sparse, readable by its owner only (a file it replaces keeps its
// mode), and opened as a new device for build, which writes the headers
// and the data area. It is renamed into place only when build succeeds:
// a failure or an interrupt leaves nothing behind, and the file of a
// killed run is removed by the next one, which leftover (if not nil)
// hears about. A volume at path that this replaces must not be in use
// (an error wrapping ErrLocked): a mount or a put would go on writing to
// the old file, unseen.
func CreateFile(path string, size int64, leftover func(atomicfile.Leftover), build func(dev *FileDevice) error) error {
	release := func() {}
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		old, err := OpenDevice(path, false)
		if errors.Is(err, ErrLocked) {
			return err
		}
		if err == nil {
			// Held while the new file is built, so that nobody opens
			// the old one meanwhile.
			release = sync.OnceFunc(func() { old.Close() })
			defer release()
		}
	}
	nf, err := CreateNewFile(path, size, leftover)
	if err != nil {
		return err
	}
	defer nf.Discard()
	err = build(nf.FileDevice)
	if cerr := nf.FileDevice.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	// Windows does not rename over a file that is open.
	release()
	return nf.tmp.Commit()
}

// NewFile is a file being made, open as a device: a temporary file beside
// its path (internal/atomicfile) that becomes the path on Commit. Discard,
// deferred, removes it unless it was committed.
type NewFile struct {
	*FileDevice
	tmp *atomicfile.File
}

// CreateNewFile starts making the file path (a container, or a detached
// header beside one) of size bytes, sparse, readable by its owner only (a
// file it replaces keeps its mode); leftover is CreateFile's.
func CreateNewFile(path string, size int64, leftover func(atomicfile.Leftover)) (*NewFile, error) {
	tmp, err := atomicfile.Create(path, atomicfile.Options{Perm: 0o600, KeepMode: true, Leftover: leftover})
	if err != nil {
		return nil, err
	}
	if err := tmp.Truncate(size); err != nil {
		tmp.Discard()
		return nil, err
	}
	dev, err := OpenNewDevice(tmp.Path())
	if err != nil {
		tmp.Discard()
		return nil, err
	}
	return &NewFile{dev, tmp}, nil
}

// Commit closes the device (Windows renames no open file) and renames
// the file into place.
func (f *NewFile) Commit() error {
	f.FileDevice.Close()
	return f.tmp.Commit()
}

// Discard closes the device and removes the file, unless it was
// committed.
func (f *NewFile) Discard() {
	f.FileDevice.Close()
	f.tmp.Discard()
}
