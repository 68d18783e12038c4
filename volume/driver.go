package volume

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/cryptvol/cryptvol/sector"
)

// Device is the encrypted container: a file or block device.
type Device interface {
	io.ReaderAt
	io.WriterAt
	// Size is the size of the device in bytes.
	Size() int64
	Sync() error
}

// Request is what a driver gets to unlock a volume.
type Request struct {
	// Dev holds the data area; Header holds the header (the same device
	// unless a detached LUKS header was given).
	Dev    Device
	Header Device
	Creds  Credentials
	Opts   Options
}

// Unlocked is what a driver hands back: how to decrypt the data area and
// where it is. The generic Volume does all sector I/O from this.
type Unlocked struct {
	Mode sector.Mode
	// DataOffset is the byte offset of the data area in Dev, DataSize its
	// length (a multiple of the sector size).
	DataOffset int64
	DataSize   int64
	// FirstSector is the IV/tweak number of the data area's first sector.
	FirstSector uint64
	// Segments, when set, replace DataOffset and FirstSector: the data
	// area (DataSize bytes) is these pieces in order, each with its own
	// place on the device and first IV, or zeros (see Segment).
	Segments []Segment
	Info     Info
	// ReadOnly is set for formats that cryptvol only reads (legacy
	// TrueCrypt, LUKS requirement flags).
	ReadOnly bool
	// Protected is a byte range of the data area that must not be written
	// (the hidden volume, under --protect-hidden). Zero length means none.
	ProtectedOffset, ProtectedSize int64
	// MasterKey is kept only to answer --show-key; it is wiped on Close.
	MasterKey []byte
	// Header is a snapshot of the header bytes the keys came from, taken
	// before they were derived; nil means none. The Volume compares it
	// with the disk before its first write, on Sync and on Close, and
	// refuses to write once it differs (ErrHeaderChanged).
	Header *HeaderSnapshot
	// State, set by drivers that implement Reopener, describes Mode so
	// that the volume can be snapshot and reopened without credentials
	// (Volume.Snapshot, Reopen). Its key is wiped on Close.
	State *ModeState
	// Close releases driver state; may be nil.
	Close func() error
}

// Driver opens one family of formats.
type Driver interface {
	// Name is the driver's name ("tcrypt", "luks").
	Name() string
	// Handles reports whether the driver serves Options.Type t ("" = auto).
	Handles(t string) bool
	// Detect is a cheap, password-less check of the first bytes of the
	// header device. Formats with no magic (TrueCrypt) return false and are
	// tried last, by password. A driver whose format always has a magic
	// also implements HasMagic() bool (returning true), and is then left out
	// of auto-detection when Detect says no; --type still selects it.
	Detect(head []byte) bool
	// Unlock decrypts the header with the credentials. It returns an error
	// wrapping ErrWrongPassword when nothing verified.
	Unlock(ctx context.Context, r *Request) (*Unlocked, error)
}

// DeviceDetector is implemented by drivers whose format can be recognised
// beyond the first bytes (LUKS2's secondary header, when the primary is
// damaged): auto-detection asks it about the header device when Detect
// said no.
type DeviceDetector interface {
	DetectDevice(hdr Device) bool
}

var (
	driversMu sync.RWMutex
	drivers   []Driver
)

// Register adds a format driver. Drivers register themselves in init; import
// them for effect (the volume/all package imports every driver).
func Register(d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers = append(drivers, d)
	sort.SliceStable(drivers, func(i, j int) bool { return drivers[i].Name() < drivers[j].Name() })
}

// Drivers returns the registered drivers.
func Drivers() []Driver {
	driversMu.RLock()
	defer driversMu.RUnlock()
	return append([]Driver(nil), drivers...)
}

// candidates orders the drivers to try for a request: a forced type picks
// its driver; otherwise drivers whose magic matches come first and, when
// one matches, only those are tried (a LUKS header is never a TrueCrypt
// one), else every driver that accepts auto-detection.
func candidates(typ string, head []byte, hdr Device) ([]Driver, error) {
	all := Drivers()
	typ = strings.ToLower(typ)
	if typ == "auto" {
		typ = ""
	}
	var out []Driver
	if typ != "" {
		for _, d := range all {
			if d.Handles(typ) {
				out = append(out, d)
			}
		}
		if len(out) == 0 {
			return nil, InvalidOptionf("unknown volume type %q (want auto, veracrypt, truecrypt, luks, luks1, luks2, bitlk or fvault2)", typ)
		}
		return out, nil
	}
	for _, d := range all {
		if d.Detect(head) {
			out = append(out, d)
		}
	}
	if len(out) == 0 && hdr != nil {
		for _, d := range all {
			if dd, ok := d.(DeviceDetector); ok && d.Handles("") && dd.DetectDevice(hdr) {
				out = append(out, d)
			}
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	for _, d := range all {
		if m, ok := d.(interface{ HasMagic() bool }); ok && m.HasMagic() {
			// A format with a magic whose magic is absent is not what
			// this is; its error would only hide the real one.
			continue
		}
		if d.Handles("") {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no volume format drivers are registered")
	}
	return out, nil
}
