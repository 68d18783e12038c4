//go:build !unix && !windows

package atomicfile

import "io/fs"

func processStart(int) string { return "0" }

// ownerAlive cannot tell here: every leftover is reported, none removed.
func ownerAlive(int, string) (alive, sure bool) { return true, false }

func fileOwner(fs.FileInfo) *owner { return nil }
