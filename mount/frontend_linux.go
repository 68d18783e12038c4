package mount

import "fmt"

// defaultFrontEnd: Linux has FUSE (fusermount3 for users), always: where
// it is missing the mount fails saying what to install, rather than
// turning into a server in the foreground; --via webdav or nfs asks for
// one (GVfs, KIO, davfs2).
func defaultFrontEnd() (FrontEnd, string) {
	return FrontFUSE, "FUSE"
}

func webDAVConnect(dir, url, user, password string) []string {
	return []string{
		fmt.Sprintf("gio mount %s   (user %s, password %s)", "dav"+url[len("http"):], user, password),
		fmt.Sprintf("or, as root: mount -t davfs %s %s", url, dir),
	}
}

func nfsConnect(dir, host string, port int, export string) []string {
	return []string{fmt.Sprintf("mount -t nfs -o %s,nolock %s:%s %s   (as root)", nfsOptions(port), host, export, dir)}
}
