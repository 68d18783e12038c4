package cgofs

import (
	"fmt"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"
)

// Available reports whether WinFsp is installed, looking for its DLL
// where cgofuse loads it from: the DLL search path, else the bin folder
// of the InstallDir that WinFsp's installer records under
// HKLM\SOFTWARE\WinFsp (32-bit registry view). cgofuse itself panics
// when it finds none, hence this check first.
func Available() error {
	name := map[string]string{"arm64": "winfsp-a64.dll", "amd64": "winfsp-x64.dll", "386": "winfsp-x86.dll"}[runtime.GOARCH]
	if name == "" {
		return fmt.Errorf("%w: no WinFsp build for %s", ErrNotInstalled, runtime.GOARCH)
	}
	if dll, err := syscall.LoadDLL(name); err == nil {
		dll.Release()
		return nil
	}
	dir, err := winfspInstallDir()
	if err != nil {
		return fmt.Errorf("%w (no %s, and no InstallDir under HKLM\\SOFTWARE\\WinFsp: %v); install it from https://winfsp.dev/rel/", ErrNotInstalled, name, err)
	}
	p := filepath.Join(dir, "bin", name)
	dll, err := syscall.LoadDLL(p)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrNotInstalled, p, err)
	}
	dll.Release()
	return nil
}

func winfspInstallDir() (string, error) {
	var key syscall.Handle
	kname, _ := syscall.UTF16PtrFromString(`Software\WinFsp`)
	if err := syscall.RegOpenKeyEx(syscall.HKEY_LOCAL_MACHINE, kname, 0, syscall.KEY_READ|syscall.KEY_WOW64_32KEY, &key); err != nil {
		return "", err
	}
	defer syscall.RegCloseKey(key)
	var buf [syscall.MAX_PATH]uint16
	var typ uint32
	size := uint32(len(buf) * 2)
	vname, _ := syscall.UTF16PtrFromString("InstallDir")
	if err := syscall.RegQueryValueEx(key, vname, nil, &typ, (*byte)(unsafe.Pointer(&buf[0])), &size); err != nil {
		return "", err
	}
	if typ != syscall.REG_SZ {
		return "", fmt.Errorf("InstallDir is not a string (type %d)", typ)
	}
	return syscall.UTF16ToString(buf[:size/2]), nil
}
