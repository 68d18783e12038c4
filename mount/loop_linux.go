package mount

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// AttachLoop attaches file to a free loop device (root only) and returns
// the device's path and an open handle on it. The device is created with
// LO_FLAGS_AUTOCLEAR: it detaches itself when its last user goes, so close
// the handle once the filesystem on it is mounted (or if mounting fails),
// and unmounting that filesystem frees the device. blockSize is the
// device's logical block size (512 when 0).
func AttachLoop(file string, readOnly bool, blockSize int) (string, *os.File, error) {
	if os.Geteuid() != 0 {
		return "", nil, errors.New("loop devices need root")
	}
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR, 0)
	if err != nil {
		return "", nil, fmt.Errorf("loop devices: %w", err)
	}
	defer ctl.Close()
	flag := os.O_RDWR
	if readOnly {
		flag = os.O_RDONLY
	}
	backing, err := os.OpenFile(file, flag, 0)
	if err != nil {
		return "", nil, err
	}
	defer backing.Close() // the loop device keeps its own reference
	var lastErr error
	for try := 0; try < 20; try++ {
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return "", nil, fmt.Errorf("finding a free loop device: %w", err)
		}
		dev := fmt.Sprintf("/dev/loop%d", n)
		lf, err := openLoopNode(dev, n, flag)
		if err != nil {
			return "", nil, err
		}
		err = configureLoop(lf, backing, file, readOnly, blockSize)
		if err == nil {
			return dev, lf, nil
		}
		lf.Close()
		lastErr = err
		if !errors.Is(err, unix.EBUSY) {
			break
		}
		// Another process took the device between GET_FREE and now.
		time.Sleep(time.Duration(try+1) * 5 * time.Millisecond)
	}
	return "", nil, fmt.Errorf("attaching %s to a loop device: %w", file, lastErr)
}

// openLoopNode opens /dev/loopN, creating the node if /dev lacks it (as in
// containers with a static /dev).
func openLoopNode(dev string, n, flag int) (*os.File, error) {
	lf, err := os.OpenFile(dev, flag, 0)
	if errors.Is(err, os.ErrNotExist) {
		if merr := unix.Mknod(dev, unix.S_IFBLK|0o660, int(unix.Mkdev(7, uint32(n)))); merr == nil {
			lf, err = os.OpenFile(dev, flag, 0)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dev, err)
	}
	return lf, nil
}

func configureLoop(lf, backing *os.File, name string, readOnly bool, blockSize int) error {
	info := unix.LoopInfo64{Flags: unix.LO_FLAGS_AUTOCLEAR}
	if readOnly {
		info.Flags |= unix.LO_FLAGS_READ_ONLY
	}
	copy(info.File_name[:len(info.File_name)-1], name)
	cfg := unix.LoopConfig{Fd: uint32(backing.Fd()), Info: info}
	if blockSize > 512 {
		cfg.Size = uint32(blockSize)
	}
	err := unix.IoctlLoopConfigure(int(lf.Fd()), &cfg)
	if err == nil || errors.Is(err, unix.EBUSY) {
		return err
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOTTY) {
		return err
	}
	// Kernels before 5.8 have no LOOP_CONFIGURE.
	if err := unix.IoctlSetInt(int(lf.Fd()), unix.LOOP_SET_FD, int(backing.Fd())); err != nil {
		return err
	}
	if err := unix.IoctlLoopSetStatus64(int(lf.Fd()), &info); err != nil {
		unix.IoctlSetInt(int(lf.Fd()), unix.LOOP_CLR_FD, 0)
		return err
	}
	return nil
}

// MountDevice mounts the block device dev on dir with the kernel's driver
// for fstype ("" tries every block filesystem the kernel knows, as
// mount(8) does) and returns the type that mounted. The mount is nosuid
// and nodev, like removable media.
func MountDevice(dev, dir, fstype string, readOnly bool) (string, error) {
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	types := []string{fstype}
	if fstype == "" {
		types = kernelFilesystems()
	}
	var firstErr error
	for _, t := range types {
		err := unix.Mount(dev, dir, t, flags, "")
		if err == nil {
			return t, nil
		}
		if fstype != "" && errors.Is(err, unix.ENODEV) {
			return "", fmt.Errorf("the kernel has no %s driver (see /proc/filesystems): %w", t, err)
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("mounting %s (%s) on %s: %w", dev, t, dir, err)
		}
	}
	if firstErr == nil {
		firstErr = errors.New("no filesystem driver in /proc/filesystems")
	}
	return "", firstErr
}

// kernelFilesystems lists the block-device filesystems in /proc/filesystems.
func kernelFilesystems() []string {
	data, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "nodev") {
			continue
		}
		if t := strings.TrimSpace(line); t != "" && t != "fuseblk" {
			out = append(out, t)
		}
	}
	return out
}

// KernelHas reports whether the kernel lists fstype in /proc/filesystems.
func KernelHas(fstype string) bool {
	for _, t := range kernelFilesystems() {
		if t == fstype {
			return true
		}
	}
	return false
}
