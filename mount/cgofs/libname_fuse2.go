//go:build linux && cgofuse && !fuse3

package cgofs

const libfuseName, libfusePkg = "libfuse.so.2", "libfuse2"
