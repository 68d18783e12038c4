package luks

import (
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/volume"
)

// Every header field that locates something is checked against the device
// size before it is used, so a malicious header never makes cryptvol read
// or write outside the file.

// readAt reads exactly n bytes at off, refusing a range outside the device.
func readAt(dev volume.Device, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > dev.Size() || n > dev.Size()-off {
		return nil, fmt.Errorf("%w: a header field points outside the device (bytes %d..%d of %d)",
			volume.ErrDamaged, off, off+n, dev.Size())
	}
	buf := make([]byte, n)
	got, err := dev.ReadAt(buf, off)
	if got < len(buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading %d bytes at %d: %w", n, off, err)
	}
	return buf, nil
}

// writeAt writes p at off; the range must lie inside the device unless
// grow is set (a detached header file being created grows as it is
// written).
func writeAt(dev volume.Device, p []byte, off int64, grow bool) error {
	if off < 0 || (!grow && (off > dev.Size() || int64(len(p)) > dev.Size()-off)) {
		return fmt.Errorf("%w: refusing to write %d bytes at %d outside the %d-byte device",
			volume.ErrDamaged, len(p), off, dev.Size())
	}
	n, err := dev.WriteAt(p, off)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("writing %d bytes at %d: %w", len(p), off, err)
	}
	return nil
}
