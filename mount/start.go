package mount

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/fsprobe"
	"github.com/cryptvol/cryptvol/volume"
)

// startMount mounts in the mode o asks for and fills in e. The Mount is
// nil when the files are served by a stacked driver (ext2/3/4, NTFS): then
// a helper process serves the raw file and runs the driver (the
// *RawHelper).
func startMount(ctx context.Context, v *volume.Volume, o ServeOptions, e *Entry, mo Options) (*Mount, *RawHelper, error) {
	if !o.Raw && !o.Loop {
		if r, err := fsprobe.Probe(v); err == nil && DriverName(r.Type) != "" {
			h, err := startDriverMount(ctx, v, r.Type, o.HelperArgs, e, mo)
			return nil, h, err
		}
		m, err := MountFiles(e.MountPoint, v, mo)
		switch {
		case errors.Is(err, ErrNotFiles):
			kind := "no FAT filesystem"
			if r, perr := fsprobe.Probe(v); perr == nil {
				kind = "a " + r.Type + " filesystem"
			}
			return nil, nil, fail(KindUnservable, fmt.Errorf("the volume holds %s, which is not served as files: mount it with --raw (and --loop, as root, for filesystems the kernel knows)", kind))
		case err != nil:
			return nil, nil, fail(KindIO, err)
		}
		return m, nil, nil
	}
	if !o.Loop {
		e.Mode = ModeRaw
		e.RawFile = filepath.Join(e.MountPoint, RawFileName)
		m, err := MountRaw(e.MountPoint, v, mo)
		if err != nil {
			return nil, nil, fail(KindIO, err)
		}
		return m, nil, nil
	}
	m, err := startLoopMount(v, o.FSType, e, o.Table, mo)
	return m, nil, err
}

// startDriverMount stacks the filesystem's own user-space driver
// (fuse2fs, ntfs-3g) on the volume's raw file at the mount point: the files
// with full read-write semantics, without root. A helper process serves
// the raw file and runs the driver (see rawhelper.go), so that killing
// this daemon never kills the server under a driver that still holds
// writes: the helper sees it go and unmounts the driver, which writes them
// first. No process here is both the server of the raw file and a client
// of the driver's mount on it (issue 25: that deadlocks when killed).
func startDriverMount(ctx context.Context, v *volume.Volume, fstype string, helperArgs []string, e *Entry, mo Options) (*RawHelper, error) {
	allowRoot, err := DriverNeedsAllowRoot(fstype)
	if err != nil {
		return nil, fail(KindUnservable, err)
	}
	e.Mode, e.FSType = ModeDriver, DriverName(fstype)
	h, err := StartRawHelper(ctx, helperArgs, mo.Logger.Writer(), v, RawServeRequest{
		FSType: fstype, Container: mo.Container, AllowRoot: allowRoot,
		MountPoint: e.MountPoint, ReadOnly: mo.ReadOnly, AllowOther: mo.AllowOther,
	})
	if err != nil {
		return nil, err
	}
	e.AuxDir, e.RawFile = filepath.Dir(h.RawFile()), h.RawFile()
	return h, nil
}

// startLoopMount serves the raw file in a private directory, attaches it
// to a loop device and mounts that on the mount point as fstype ("":
// detected).
func startLoopMount(v *volume.Volume, fstype string, e *Entry, table Table, mo Options) (*Mount, error) {
	if fstype == "" {
		fstype = kernelType(v)
		if fstype == "vfat" {
			return nil, fail(KindUnservable, errors.New("the volume holds a FAT filesystem and this kernel has no vfat driver: mount it without --loop (cryptvol serves FAT itself)"))
		}
	}
	aux := table.AuxDir(e.PID)
	if err := os.MkdirAll(aux, 0o700); err != nil {
		return nil, fail(KindIO, err)
	}
	e.Mode, e.AuxDir = ModeLoop, aux
	e.RawFile = filepath.Join(aux, RawFileName)
	m, err := MountRaw(aux, v, mo)
	if err != nil {
		os.Remove(aux)
		return nil, fail(KindIO, err)
	}
	undo := func(err error) (*Mount, error) {
		m.Shutdown()
		os.Remove(aux)
		return nil, fail(KindIO, err)
	}
	dev, lf, err := AttachLoop(e.RawFile, mo.ReadOnly, 0)
	if err != nil {
		return undo(err)
	}
	used, err := MountDevice(dev, e.MountPoint, fstype, mo.ReadOnly)
	lf.Close() // the mount holds the device now; unmounting it frees the device
	if err != nil {
		return undo(err)
	}
	e.LoopDevice, e.FSType = dev, used
	return m, nil
}

// kernelType names the kernel driver for the filesystem in v ("" if none
// is recognised: then every driver is tried).
func kernelType(v *volume.Volume) string {
	r, err := fsprobe.Probe(v)
	if err != nil {
		return ""
	}
	switch t := r.Type; {
	case KernelHas(t):
		return t
	case strings.HasPrefix(t, "ext") && KernelHas("ext4"):
		return "ext4"
	case t == "ntfs" && KernelHas("ntfs3"):
		return "ntfs3"
	case t == "vfat":
		return t
	}
	return ""
}

// shutdownMount ends the mount on a signal: the kernel filesystem of a loop
// mount first (detached if busy, after a sync), then the FUSE mount.
func shutdownMount(m *Mount, e *Entry, logger *log.Logger) error {
	if e.Mode == ModeLoop {
		SyncAll()
		if err := Unmount(e.MountPoint, false); err != nil && !errors.Is(err, ErrNotMounted) {
			logger.Printf("%v: detaching it", err)
			Unmount(e.MountPoint, true)
		}
		// The loop device lets go of the raw file once the filesystem on
		// it is gone; give it a moment to.
		for i := 0; i < 200 && m.OpenCount() > 0; i++ {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return m.Shutdown()
}
