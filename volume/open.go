package volume

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cryptvol/cryptvol/volume/internal/lock"
)

// Open unlocks the volume in the file or block device at path with default
// options (auto-detected format, read-write).
func Open(path string, c Credentials) (*Volume, error) {
	return OpenWith(context.Background(), path, c, Options{})
}

// OpenWith unlocks the volume at path. The context cancels a slow key
// derivation.
func OpenWith(ctx context.Context, path string, c Credentials, o Options) (*Volume, error) {
	dev, err := openDevice(path, o.ReadOnly, o.warn)
	if err != nil {
		return nil, err
	}
	var hdr Device = dev
	if o.Header != "" {
		h, err := openDevice(o.Header, o.ReadOnly, o.warn)
		if err != nil {
			dev.Close()
			return nil, err
		}
		hdr = h
	}
	wdev, whdr := Device(dev), hdr
	if o.WrapDevice != nil {
		wdev = o.WrapDevice(dev)
		whdr = wdev
		if hdr != Device(dev) {
			whdr = o.WrapDevice(hdr)
		}
	}
	v, err := OpenDeviceWith(ctx, wdev, whdr, c, o)
	if err != nil {
		if hdr != Device(dev) {
			hdr.(*FileDevice).Close()
		}
		dev.Close()
		return nil, err
	}
	v.closers = append(v.closers, dev.Close)
	if hdr != Device(dev) {
		v.closers = append(v.closers, hdr.(*FileDevice).Close)
	}
	return v, nil
}

// OpenDeviceWith unlocks a volume on an already open device; hdr is the
// device holding the header (dev itself unless the header is detached).
// Closing the Volume does not close the devices.
func OpenDeviceWith(ctx context.Context, dev, hdr Device, c Credentials, o Options) (*Volume, error) {
	if hdr == nil {
		hdr = dev
	}
	head := make([]byte, 4096)
	n, err := hdr.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading header: %w", err)
	}
	head = head[:n]
	ds, err := candidates(o.Type, head, hdr)
	if err != nil {
		return nil, err
	}
	req := &Request{Dev: dev, Header: hdr, Creds: c, Opts: o}
	var firstErr error
	for _, d := range ds {
		u, err := d.Unlock(ctx, req)
		if err == nil {
			v, err := newVolume(dev, u, o)
			if v != nil {
				v.hdr = hdr
				v.driver = d
			}
			return v, err
		}
		if !errors.Is(err, ErrWrongPassword) {
			return nil, err
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// FileDevice is a Device over an *os.File (a regular file or a block
// device, whose size is found by seeking to its end), locked for as long
// as it is open (see the package doc).
type FileDevice struct {
	*os.File
	size int64
	lock *lock.Lock
}

// OpenDevice opens path as a Device and locks it without waiting: shared
// when readOnly, exclusive otherwise. If another holder's lock conflicts it
// fails with a *LockedError (errors.Is(err, ErrLocked)).
func OpenDevice(path string, readOnly bool) (*FileDevice, error) {
	return openDevice(path, readOnly, nil)
}

// openDevice is OpenDevice; warn hears that the file could not be locked
// and what the recoveries (recovery.go) finished first.
func openDevice(path string, readOnly bool, warn func(string)) (*FileDevice, error) {
	recoverPending(path, warn)
	return openLocked(path, readOnly, warn)
}

// openLocked opens and locks path, nothing else.
func openLocked(path string, readOnly bool, warn func(string)) (*FileDevice, error) {
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	l, err := lock.Acquire(f, path, !readOnly)
	if err != nil {
		f.Close()
		return nil, err
	}
	if l.Warning != "" && warn != nil {
		warn(l.Warning)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		l.Release()
		f.Close()
		return nil, err
	}
	return &FileDevice{File: f, size: size, lock: l}, nil
}

// OpenNewDevice opens path, a file this process has just made and owns
// (a temporary file that becomes a volume when complete), as a Device
// without taking the volume lock: nobody else can know the file yet, and
// its maker may already hold a lock on it (internal/atomicfile does), which
// the volume lock would collide with. Use OpenDevice for anything else.
func OpenNewDevice(path string) (*FileDevice, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &FileDevice{File: f, size: size}, nil
}

// Close releases the lock and closes the file.
func (d *FileDevice) Close() error {
	d.lock.Release()
	return d.File.Close()
}

// Size is the device size in bytes at open time.
func (d *FileDevice) Size() int64 { return d.size }
