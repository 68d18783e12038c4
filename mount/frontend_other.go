//go:build !linux && !darwin && !windows

package mount

import "fmt"

// defaultFrontEnd: elsewhere there is no FUSE support in this package;
// WebDAV works with any client.
func defaultFrontEnd() (FrontEnd, string) {
	return FrontWebDAV, "no FUSE support on this platform"
}

func webDAVConnect(dir, url, user, password string) []string {
	return []string{fmt.Sprintf("connect any WebDAV client to %s (user %s, password %s)", url, user, password)}
}

func nfsConnect(dir, host string, port int, export string) []string {
	return []string{fmt.Sprintf("mount -t nfs -o %s %s:%s %s", nfsOptions(port), host, export, dir)}
}
