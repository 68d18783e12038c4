// Package cgofs serves a cryptvol filesystem (filesystem.FS, and
// filesystem.Writer for writes) through github.com/winfsp/cgofuse: on
// Windows through WinFsp's FUSE layer, which cgofuse reaches without cgo
// (it loads winfsp-x64.dll at run time), so that `cryptvol mount` gives a
// drive letter or a directory without a kernel driver of cryptvol's own
// (issue 27, item 2).
//
// The adapter, FS, is cgofuse's FileSystemInterface: every request is a
// call on the one filesystem layer, under one lock (the implementations
// are not safe for concurrent use, and WinFsp and libfuse both serve
// requests from several threads). Errors become errnos through
// internal/fserrno, the table the FUSE mount uses too.
//
// It is built on Windows, and on Linux with the build tag cgofuse (a cgo
// build against libfuse's headers: the Debian package libfuse3-dev with
// the tag fuse3 as well, or libfuse-dev without it), where the same
// adapter runs the project's conformance suite through the kernel; on
// Linux, package mount's go-fuse mount is what `cryptvol mount` uses.
// Elsewhere Mount returns ErrNotSupported.
package cgofs
