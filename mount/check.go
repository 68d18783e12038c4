package mount

import (
	"fmt"
	"os"
	"path/filepath"
)

// MountPaths makes the volume's and the mount point's paths absolute and
// checks them before a mount: it refuses a missing volume (KindIO), a
// mount point that is not a directory or is already mounted (KindUsage),
// a volume that is already mounted (KindInUse), and a system without
// FUSE (KindIO).
func MountPaths(table Table, vol, mnt string) (volPath, dir string, err error) {
	if volPath, err = filepath.Abs(vol); err != nil {
		return "", "", err
	}
	if dir, err = filepath.Abs(mnt); err != nil {
		return "", "", err
	}
	if _, err := os.Stat(volPath); err != nil {
		return "", "", fail(KindIO, err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", "", fail(KindUsage, fmt.Errorf("mount point: %w (create the directory first)", err))
	}
	if !fi.IsDir() {
		return "", "", fail(KindUsage, fmt.Errorf("mount point %s is not a directory", dir))
	}
	if mp, ok := IsMountPoint(dir); ok {
		return "", "", fail(KindUsage, fmt.Errorf("%s is already a mount point (%s from %s)", dir, mp.FSType, mp.Source))
	}
	if err := checkNotMounted(table, volPath); err != nil {
		return "", "", err
	}
	if err := Available(); err != nil {
		return "", "", fail(KindIO, err)
	}
	return volPath, dir, nil
}

// VolumePath makes the volume's path absolute and refuses a missing
// volume (KindIO) and one that is already mounted (KindInUse), for a
// front end that makes its own mount point.
func VolumePath(table Table, vol string) (string, error) {
	volPath, err := filepath.Abs(vol)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(volPath); err != nil {
		return "", fail(KindIO, err)
	}
	return volPath, checkNotMounted(table, volPath)
}

// checkNotMounted refuses (KindInUse) a volume that a live mount of the
// table serves: mounting it twice would corrupt it.
func checkNotMounted(table Table, volPath string) error {
	if e, err := table.Find(volPath); err == nil && e.Volume == volPath && e.Alive {
		return fail(KindInUse, fmt.Errorf("%s is already mounted at %s: mounting it twice would corrupt it", volPath, e.MountPoint))
	}
	return nil
}
