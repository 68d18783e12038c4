package main

import (
	"io/fs"
	"time"
)

// jsonEntry is one line of `ls --json` and `archive ls --json`.
type jsonEntry struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"` // file, dir, symlink, ...
	Size    int64     `json:"size"`
	Mode    string    `json:"mode,omitempty"`
	ModTime time.Time `json:"mtime"`
	Target  string    `json:"target,omitempty"` // a symbolic link's
	Damage  string    `json:"damage,omitempty"` // a damaged entry's problem
}

// entryType names a mode's kind for JSON.
func entryType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m.IsRegular():
		return "file"
	}
	return "special"
}
