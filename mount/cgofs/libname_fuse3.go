//go:build linux && cgofuse && fuse3

package cgofs

const libfuseName, libfusePkg = "libfuse3.so.3", "libfuse3-3"
