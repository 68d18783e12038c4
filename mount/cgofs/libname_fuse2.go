//go:build linux && cgofuse && !fuse3

package cgofs

const libfuseName, libfusePkg = "libfuse.so.2", "libfuse2"

// libfuseOptions: hard_remove makes an open file that is removed go at
// once, as on a local filesystem, instead of being renamed to a visible
// .fuse_hidden file (libfuse 3 has no such option on its command line).
var libfuseOptions = []string{"-o", "hard_remove"}
