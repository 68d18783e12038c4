package mount

import (
	"fmt"

	"github.com/cryptvol/cryptvol/mount/cgofs"
)

// defaultFrontEnd: Windows mounts through WinFsp when it is installed;
// otherwise over WebDAV, for the WebClient service that every Windows
// desktop runs (net use).
func defaultFrontEnd() (FrontEnd, string) {
	if err := cgofs.Available(); err != nil {
		return FrontWebDAV, fmt.Sprintf("%v: WebDAV on loopback for Windows' own WebClient", err)
	}
	return FrontWinFsp, "WinFsp"
}

// webDAVConnect: net use maps a drive letter (or "*", the next free one);
// the serve offers Digest, which the WebClient uses over plain http
// without any registry change.
func webDAVConnect(dir, url, user, password string) []string {
	if !driveLetter(dir) {
		dir = "*"
	}
	return []string{fmt.Sprintf("net use %s %s /user:%s %s", dir, url, user, password)}
}

func nfsConnect(dir, host string, port int, export string) []string {
	return []string{fmt.Sprintf("Windows' own NFS client (the optional Services for NFS) reaches NFS only on port 2049, not %d: use --via winfsp or --via webdav (export %s:%s for other clients)", port, host, export)}
}
