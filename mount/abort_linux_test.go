package mount

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// abortConnection aborts the FUSE connection of the mount at dir (through
// fusectl, where it is mounted), so that a failed test that left files of
// its own in-process mount open cannot hang when the process exits: the
// kernel would otherwise wait forever for the dead server to answer their
// final FLUSH.
func abortConnection(dir string) {
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return
	}
	p := fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", unix.Minor(uint64(st.Dev)))
	os.WriteFile(p, []byte("1"), 0)
}
