package mount

import (
	"fmt"
	"strings"
)

// FrontEnd is a way `cryptvol mount` puts a volume's files on the
// desktop. Which one a platform uses by default, and what each needs, is
// decided here (frontend_*.go), not by the command.
type FrontEnd string

const (
	// FrontFUSE is this package's go-fuse mount: Linux (fusermount3),
	// macOS with macFUSE or FUSE-T.
	FrontFUSE FrontEnd = "fuse"
	// FrontWinFsp is mount/cgofs through WinFsp's FUSE layer (Windows,
	// with WinFsp installed): a drive letter or a directory.
	FrontWinFsp FrontEnd = "winfsp"
	// FrontWebDAV serves the files over WebDAV on loopback for the
	// system's own client (Windows' WebClient: net use).
	FrontWebDAV FrontEnd = "webdav"
	// FrontNFS serves them over NFSv3 on loopback for the system's own
	// client (macOS: mount_nfs).
	FrontNFS FrontEnd = "nfs"
)

// FrontEnds are the values --via takes.
var FrontEnds = []FrontEnd{FrontFUSE, FrontWinFsp, FrontWebDAV, FrontNFS}

// ChooseFrontEnd returns the front end named by via, or with via empty
// the one this machine should use: the first that works without admin
// rights here (see defaultFrontEnd), and why it was chosen.
func ChooseFrontEnd(via string) (FrontEnd, string, error) {
	if via == "" {
		f, why := defaultFrontEnd()
		return f, why, nil
	}
	for _, f := range FrontEnds {
		if strings.EqualFold(via, string(f)) {
			return f, "asked for with --via", nil
		}
	}
	return "", "", fmt.Errorf("--via %q: the front ends are fuse, winfsp, webdav and nfs", via)
}

// WebDAVConnect is what to run to attach a WebDAV serve of url at dir
// with the system's own client, one command a line.
func WebDAVConnect(dir, url, user, password string) []string {
	return webDAVConnect(dir, url, user, password)
}

// NFSConnect is what to run to attach an NFSv3 serve (host, port,
// export) at dir with the system's own client.
func NFSConnect(dir, host string, port int, export string) []string {
	return nfsConnect(dir, host, port, export)
}

// driveLetter reports whether dir names a drive ("Z:"), as net use takes
// it.
func driveLetter(dir string) bool {
	return len(dir) == 2 && dir[1] == ':' && ('a' <= dir[0] && dir[0] <= 'z' || 'A' <= dir[0] && dir[0] <= 'Z')
}

// nfsOptions are the mount options of an NFSv3 serve: TCP, the one port
// for MOUNT and NFS, and locks kept by the client (the server has no
// NLM).
func nfsOptions(port int) string {
	return fmt.Sprintf("vers=3,tcp,port=%d,mountport=%d", port, port)
}
