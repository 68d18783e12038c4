// Package resize grows and shrinks an encrypted file container together
// with the filesystem inside it: VeraCrypt and TrueCrypt containers (both
// header copies rewritten for the new size, the backup header group moved
// to the new end) and LUKS1/LUKS2 file containers (a LUKS2 data segment
// of fixed size gets the new size).
//
// The order of the writes is what keeps a killed resize recoverable: a
// shrink makes the filesystem fit first, then rewrites the headers, then
// truncates the file; a grow extends the file, rewrites the headers, then
// grows the filesystem. At every point the volume opens with its old or
// its new size and every file.
//
// FAT and exFAT are resized in process (filesystem.Resize); other
// filesystems (ext2/3/4, NTFS) by a Tool the caller supplies, as the
// command line runs resize2fs and ntfsresize on a scratch copy.
package resize

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/luks"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

var (
	// ErrRefused marks a resize that would destroy data: a shrink the
	// filesystem cannot follow, or one that would cut off a hidden
	// volume. Nothing was changed.
	ErrRefused = errors.New("resize refused")
	// ErrBadSize marks a requested size the layout cannot take.
	ErrBadSize = errors.New("invalid size")
)

// Size is what --size asks for: Amount bytes, or Amount more ('+') or
// less ('-') than the container is now.
type Size struct {
	Rel    byte // 0, '+' or '-'
	Amount int64
}

// Target is the container size s asks for, given the old size, rounded
// down to 4 KiB.
func (s Size) Target(old int64) int64 {
	n := s.Amount
	switch s.Rel {
	case '+':
		n = old + s.Amount
	case '-':
		n = old - s.Amount
	}
	return n - n%4096
}

// Tool resizes the filesystems package filesystem cannot resize in
// process, with an external program.
type Tool interface {
	// Resizes reports whether the tool resizes filesystems of type typ
	// (fsprobe's names).
	Resizes(typ string) bool
	// Resize makes the filesystem of type typ on v declare size bytes
	// and says what it did. A refusal must leave v as it was.
	Resize(ctx context.Context, v *volume.Volume, typ string, size int64) (note string, err error)
}

// Request is one resize.
type Request struct {
	// Dev is the container, opened for writing.
	Dev *volume.FileDevice
	// Creds and Options open it (Options.ProtectHidden: the credentials
	// of a hidden volume inside, which a grow checks and a shrink
	// refuses to cut off).
	Creds   volume.Credentials
	Options volume.Options
	Size    Size
	// NoHidden says the VeraCrypt/TrueCrypt volume holds no hidden
	// volume, so a shrink may give up the end of its data area.
	NoHidden bool
	// Tool resizes ext2/3/4 and NTFS; nil refuses them.
	Tool Tool
	// Path is the container's file name, beside which the record of a
	// resize in progress is kept (record.go); "" keeps none.
	Path string

	rec    *record // the resize in progress
	resume bool    // rec was found, not made by this run
}

// Result says what Run did.
type Result struct {
	// Format is "luks" or "tcrypt".
	Format           string
	OldSize, NewSize int64 // container bytes
	OldData, NewData int64 // data area bytes
	// Resumed says an interrupted resize of the container was found and
	// finished (a relative size counted from where it started).
	Resumed bool
	// From is the container size a relative size counted from.
	From int64
	// FixedSegment is true for a LUKS2 data segment of fixed size (it
	// now says NewData bytes); false when it runs to the end of the file.
	FixedSegment bool
	// Filesystem says what was done to the filesystem inside.
	Filesystem string
}

// Run resizes the container on r.Dev and its filesystem.
func Run(ctx context.Context, r Request) (Result, error) {
	o := r.Options
	if o.Header != "" {
		return Result{}, fmt.Errorf("%w: resizing a volume with a detached header", volume.ErrUnsupported)
	}
	if o.Hidden || o.System {
		return Result{}, fmt.Errorf("%w: a hidden volume lies inside its outer one and system encryption in its partition: resize the outer volume (with the hidden credentials) or the container", volume.ErrUnsupported)
	}
	if r.Path != "" {
		rec, err := loadRecord(r.Path)
		if err != nil {
			return Result{}, err
		}
		r.rec, r.resume = rec, rec != nil
	}
	v, err := r.open(ctx, r.Dev)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if luks.Present(r.Dev) {
		res, err = r.luks(ctx, v)
	} else {
		res, err = r.tcrypt(ctx, v)
	}
	res.Resumed = r.resume
	switch {
	case err == nil:
		if r.Path != "" {
			err = finishRecord(r.Path)
		}
	case !r.resume && r.rec != nil && (errors.Is(err, ErrRefused) || errors.Is(err, ErrBadSize) || errors.Is(err, volume.ErrWrongPassword) || errors.Is(err, volume.ErrUnsupported)):
		// Refused before anything changed: no resize is in progress.
		finishRecord(r.Path)
	}
	return res, err
}

// from is the size a relative --size counts from: the container's, or
// the one an interrupted resize started from.
// A record whose sizes the container has neither of is stale (another
// file now under the same identity): dropped.
func (r *Request) from(size int64) int64 {
	if r.rec != nil && size != r.rec.OldSize && size != r.rec.Target {
		r.rec, r.resume = nil, false
	}
	if r.rec != nil {
		return r.rec.OldSize
	}
	return size
}

// begin records the resize before its first change.
func (r *Request) begin(res Result) error {
	if r.Path == "" {
		return nil
	}
	if r.rec == nil {
		r.rec = &record{OldSize: res.OldSize}
	}
	if r.rec.Journal {
		// An external tool's result, complete, that a kill stopped
		// while it was copied in: copied in again.
		if err := r.rec.copyIn(r.Path, r.Dev); err != nil {
			return err
		}
	}
	r.rec.Target = res.NewSize
	return r.rec.save(r.Path)
}

func (r *Request) open(ctx context.Context, dev volume.Device) (*volume.Volume, error) {
	o := r.Options
	return volume.OpenDeviceWith(ctx, dev, dev, r.Creds, volume.Options{Type: o.Type, Hash: o.Hash, Encryption: o.Encryption, Warn: o.Warn})
}

// tcrypt resizes a VeraCrypt or TrueCrypt container; v is the unlocked
// volume (closed here).
func (r *Request) tcrypt(ctx context.Context, v *volume.Volume) (Result, error) {
	res := Result{Format: "tcrypt", OldData: v.Size()}
	res.OldSize = tcrypt.ContainerSizeFor(res.OldData)
	res.From = r.from(res.OldSize)
	res.NewSize = r.Size.Target(res.From)
	res.NewData = tcrypt.DataSizeFor(res.NewSize)
	shrink := res.NewSize < res.OldSize
	switch {
	case res.NewSize < tcrypt.MinResizeSize:
		v.Close()
		return res, fmt.Errorf("%w: the container would be %d bytes, fewer than the %d its two header groups and one block need", ErrBadSize, res.NewSize, tcrypt.MinResizeSize)
	case r.Options.ProtectHidden != nil && shrink:
		v.Close()
		return res, fmt.Errorf("%w: shrinking an outer volume would cut off its hidden volume, which lies at the end of the outer one's data area (nothing changed)", ErrRefused)
	case !r.NoHidden && shrink:
		// A hidden volume lives in the outer filesystem's free space at
		// the end, exactly what a shrink gives up, and is invisible
		// without its password.
		v.Close()
		return res, fmt.Errorf("%w: a shrink gives up the end of the data area, where a hidden volume would lie, and one cannot be seen without its password; say the volume holds none (--no-hidden) (nothing changed)", ErrRefused)
	}
	if err := r.begin(res); err != nil {
		v.Close()
		return res, err
	}
	note, err := r.shrinkFilesystem(ctx, v, r.Dev, res.OldData, res.NewData)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	dev := r.Dev
	rdev := &sizedDevice{FileDevice: dev, size: dev.Size()}
	was := rdev.size
	if res.NewSize > rdev.size {
		if err := dev.Truncate(res.NewSize); err != nil {
			return res, err
		}
		rdev.size = res.NewSize
	}
	if err := tcrypt.Resize(ctx, rdev, r.Creds, r.Options, res.NewSize); err != nil {
		if errors.Is(err, volume.ErrWrongPassword) && was < res.NewSize {
			// The hidden volume's credentials were wrong: nothing was
			// written but the extension, which goes again.
			dev.Truncate(was)
		}
		if errors.Is(err, tcrypt.ErrResizeRefused) {
			return res, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		return res, err
	}
	if rdev.size > res.NewSize {
		if err := dev.Truncate(res.NewSize); err != nil {
			return res, err
		}
		if err := dev.Sync(); err != nil {
			return res, err
		}
	}
	if note == "" {
		rdev.size = res.NewSize
		if note, err = r.growFilesystem(ctx, rdev); err != nil {
			return res, err
		}
	}
	res.Filesystem = note
	return res, nil
}

// luks resizes a LUKS file container: the filesystem shrunk first on a
// shrink, the data segment's size rewritten where the LUKS2 header fixes
// one (LUKS1 and LUKS2 "dynamic" segments run to the end of the file and
// stay so), the file extended before the header on a grow and truncated
// after it on a shrink. v is the unlocked volume (closed here).
func (r *Request) luks(ctx context.Context, v *volume.Volume) (Result, error) {
	dev := r.Dev
	res := Result{Format: "luks", OldData: v.Size(), OldSize: dev.Size()}
	offset, fixed, err := luks.DataLayout(dev)
	if err != nil {
		v.Close()
		return res, err
	}
	res.FixedSegment = fixed != 0
	res.From = r.from(res.OldSize)
	res.NewSize = r.Size.Target(res.From)
	if res.NewSize < offset+4096 {
		v.Close()
		return res, fmt.Errorf("%w: the container would be %d bytes, fewer than its %d-byte header and one 4 KiB block", ErrBadSize, res.NewSize, offset)
	}
	res.NewData = res.NewSize - offset
	if err := r.begin(res); err != nil {
		v.Close()
		return res, err
	}
	note, err := r.shrinkFilesystem(ctx, v, dev, res.OldData, res.NewData)
	if cerr := v.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return res, err
	}
	if res.NewSize > res.OldSize {
		if err := dev.Truncate(res.NewSize); err != nil {
			return res, err
		}
	}
	if res.FixedSegment {
		if err := luks.SetDataSize(dev, res.NewData); err != nil {
			return res, err
		}
	}
	if res.NewSize < res.OldSize {
		if err := dev.Truncate(res.NewSize); err != nil {
			return res, err
		}
	}
	if err := dev.Sync(); err != nil {
		return res, err
	}
	if note == "" {
		if note, err = r.growFilesystem(ctx, &sizedDevice{FileDevice: dev, size: res.NewSize}); err != nil {
			return res, err
		}
	}
	res.Filesystem = note
	return res, nil
}

// shrinkFilesystem makes the filesystem on v fit newData bytes before the
// headers change. On a grow it does nothing and returns "" when the
// filesystem is to be grown once the volume has its new size (after the
// headers), or a note saying why there is nothing to grow.
func (r *Request) shrinkFilesystem(ctx context.Context, v *volume.Volume, dev volume.Device, oldData, newData int64) (string, error) {
	typ := probe(v)
	if newData >= oldData {
		if typ == "" {
			return "No filesystem recognised inside: nothing else to grow.", nil
		}
		if filesystem.Resizable(typ) || (r.Tool != nil && r.Tool.Resizes(typ)) {
			return "", nil // grown after the headers (growFilesystem)
		}
		return fmt.Sprintf("The %s filesystem keeps its size: growing it is not supported.", typ), nil
	}
	if typ == "" {
		return "", fmt.Errorf("%w: no filesystem recognised inside: cannot prove a shrink keeps the data (nothing changed)", ErrRefused)
	}
	if r.Tool != nil && r.Tool.Resizes(typ) {
		return r.runTool(ctx, v, dev, typ, newData)
	}
	got, err := filesystem.Resize(typ, v, oldData, newData)
	switch {
	case errors.Is(err, filesystem.ErrUnsupported):
		return "", fmt.Errorf("%w: shrinking a %s filesystem (nothing changed): %w", volume.ErrUnsupported, typ, err)
	case errors.Is(err, filesystem.ErrCannotShrink):
		return "", fmt.Errorf("%w: %w (nothing changed)", ErrRefused, err)
	case err != nil:
		return "", err
	case got > newData:
		return "", fmt.Errorf("%w: the %s filesystem shrinks to %d bytes at least, more than the %d the new size leaves (nothing changed)", ErrRefused, typ, got, newData)
	}
	if err := v.Sync(); err != nil {
		return "", err
	}
	return fmt.Sprintf("The %s filesystem now declares %d bytes.", typ, got), nil
}

// growFilesystem opens the volume on dev, now of its new size, and grows
// the filesystem inside to the whole data area.
func (r *Request) growFilesystem(ctx context.Context, dev volume.Device) (string, error) {
	v, err := r.open(ctx, dev)
	if err != nil {
		return "", err
	}
	defer v.Close()
	typ := probe(v)
	switch {
	case typ == "":
		return "No filesystem recognised inside.", nil
	case r.Tool != nil && r.Tool.Resizes(typ):
		return r.runTool(ctx, v, dev, typ, v.Size())
	}
	got, err := filesystem.Resize(typ, v, v.Size(), v.Size())
	if err != nil {
		return "", fmt.Errorf("growing the %s filesystem (the volume has its new size; the filesystem keeps its old one): %w", typ, err)
	}
	if err := v.Sync(); err != nil {
		return "", err
	}
	if got < v.Size() {
		return fmt.Sprintf("The %s filesystem now declares %d bytes (as far as its FAT's room allows; the rest of the %d-byte data area is unused).", typ, got, v.Size()), nil
	}
	return fmt.Sprintf("The %s filesystem now declares %d bytes.", typ, got), nil
}

// runTool runs r.Tool on the filesystem of v (on dev) with its writes
// going to the journal (record.go), then copies the journal in.
func (r *Request) runTool(ctx context.Context, v *volume.Volume, dev volume.Device, typ string, size int64) (string, error) {
	if r.Path == "" {
		return r.Tool.Resize(ctx, v, typ, size)
	}
	j, err := newJournal(r.Path, dev)
	if err != nil {
		return "", err
	}
	o := r.Options
	jv, err := volume.OpenDeviceWith(ctx, j, dev, r.Creds, volume.Options{Type: o.Type, Hash: o.Hash, Encryption: o.Encryption, Warn: o.Warn})
	if err != nil {
		j.Close()
		return "", err
	}
	note, err := r.Tool.Resize(ctx, jv, typ, size)
	if cerr := jv.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = j.Sync()
	}
	if cerr := j.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(journalPath(r.Path))
		return "", err
	}
	r.rec.Journal = true
	if err := r.rec.save(r.Path); err != nil {
		return "", err
	}
	if err := r.rec.copyIn(r.Path, dev); err != nil {
		return "", err
	}
	return note, nil
}

func probe(v *volume.Volume) string {
	p, err := fsprobe.Probe(v)
	if err != nil {
		return ""
	}
	return p.Type
}

// sizedDevice is the container while it changes size: Size follows the
// truncations, where FileDevice's is the size at open time.
type sizedDevice struct {
	*volume.FileDevice
	size int64
}

func (d *sizedDevice) Size() int64 { return d.size }
