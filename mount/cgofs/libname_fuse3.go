//go:build linux && cgofuse && fuse3

package cgofs

const libfuseName, libfusePkg = "libfuse3.so.3", "libfuse3-3"

// libfuseOptions: libfuse 3 has no hard_remove on its command line (it is
// set in the init callback's configuration, which cgofuse does not
// expose), so an open file that is removed is renamed to .fuse_hidden*
// until it is closed; WinFsp has no such thing (Windows deletes on the
// last close).
var libfuseOptions []string
