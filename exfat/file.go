package exfat

import "github.com/cryptvol/cryptvol/internal/fatcore"

// File is an open file or directory. Its methods are safe for concurrent
// use. Reads and writes go straight to the device (no data cache); size,
// first cluster and modification time reach the directory entry on Sync,
// Close, or FS.Sync. Its methods (Read ReadAt Write WriteAt Seek Truncate
// Sync Close Stat ReadDir Name) are the handle fat and exfat share.
type File = fatcore.File[*node, *dirCache]

// paths is what FS gets from fatcore: Open, Create, OpenFile, ReadFile,
// WriteFile, MkdirAll and IOFS over OpenFile, and Stat, ReadDir, Mkdir,
// Remove, RemoveAll, Chtimes, SetCreateTime, SetAttributes and Rename over
// the backend (see fatcore.Paths for their documentation).
type paths = fatcore.Paths[*node, *dirCache, *entry, *FileInfo, Attr]
