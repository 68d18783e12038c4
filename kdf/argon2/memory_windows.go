package argon2

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// memoryStatusEx mirrors the Win32 MEMORYSTATUSEX structure.
type memoryStatusEx struct {
	length               uint32
	memoryLoad           uint32
	totalPhys            uint64
	availPhys            uint64
	totalPageFile        uint64
	availPageFile        uint64
	totalVirtual         uint64
	availVirtual         uint64
	availExtendedVirtual uint64
}

var procGlobalMemoryStatusEx = windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")

// systemAvailableMemory asks GlobalMemoryStatusEx for the available
// physical memory (ullAvailPhys).
func systemAvailableMemory() (uint64, string) {
	var s memoryStatusEx
	s.length = uint32(unsafe.Sizeof(s))
	if err := procGlobalMemoryStatusEx.Find(); err == nil {
		if r, _, _ := procGlobalMemoryStatusEx.Call(uintptr(unsafe.Pointer(&s))); r != 0 {
			return s.availPhys, "GlobalMemoryStatusEx ullAvailPhys"
		}
	}
	return fallbackAvailable, "unknown on this system, assumed " + fallbackDesc
}
