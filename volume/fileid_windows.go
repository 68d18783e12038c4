//go:build windows

package volume

import (
	"os"

	"golang.org/x/sys/windows"
)

// fileID is the volume serial number and the 64-bit file index, which
// Windows keeps for a file across renames, as Unix keeps an inode.
func fileID(f *os.File) (FileID, error) {
	var fi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &fi); err != nil {
		return FileID{}, &os.PathError{Op: "GetFileInformationByHandle", Path: f.Name(), Err: err}
	}
	return FileID{Dev: uint64(fi.VolumeSerialNumber), Ino: uint64(fi.FileIndexHigh)<<32 | uint64(fi.FileIndexLow)}, nil
}

// openFileID opens path only to read its identity.
func openFileID(path string) (*os.File, error) { return os.Open(path) }
