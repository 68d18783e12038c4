package mount

import "fmt"

// defaultFrontEnd: macOS mounts through FUSE when macFUSE or FUSE-T is
// installed; otherwise through its own NFS client, with no kernel
// extension at all.
func defaultFrontEnd() (FrontEnd, string) {
	if err := Available(); err != nil {
		return FrontNFS, fmt.Sprintf("no macFUSE or FUSE-T (%v): NFS on loopback for the system's own client", err)
	}
	return FrontFUSE, "macFUSE/FUSE-T"
}

func webDAVConnect(dir, url, user, password string) []string {
	return []string{
		fmt.Sprintf("mount_webdav -i %s %s   (user %s, password %s), or Finder, Go, Connect to Server", url, dir, user, password),
	}
}

// nfsConnect: locallocks because the serve has no lock manager; the
// mount point must be a directory the user owns.
func nfsConnect(dir, host string, port int, export string) []string {
	return []string{fmt.Sprintf("mount_nfs -o %s,locallocks %s:%s %s", nfsOptions(port), host, export, dir)}
}
