//go:build linux && !cgofuse

package cgofs_test

import "testing"

// TestCgofuseConformance needs a cgo build against libfuse's headers,
// which a default build does not assume; .ci/run installs them and runs
// it.
func TestCgofuseConformance(t *testing.T) {
	t.Skip("skipping: the cgofuse adapter's conformance run needs `go test -tags cgofuse,fuse3 ./mount/cgofs` with the Debian package libfuse3-dev (or -tags cgofuse with libfuse-dev)")
}
