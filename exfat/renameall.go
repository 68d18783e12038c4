package exfat

import (
	"fmt"
	"os"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// RenameAll renames each pair's [0] onto its [1] as Rename does, for the
// flushes of one rename however many pairs there are (issue 31: put
// publishes the files it wrote under temporary names with it). First
// every file's content, chains and bitmap go to the disk (one barrier:
// no new name is ever seen pointing at clusters not yet written); then
// each rename is made, in place where its new set fits over the old one
// (one sector write), else by writing the new set; after a second barrier,
// only when some rename needs it, the old sets of those are removed and
// the clusters of replaced files freed, as Rename does for one.
//
// It returns how many pairs, from the first, were renamed: after an
// error, those after are as they were.
func (fs *FS) RenameAll(pairs [][2]string) (int, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if err := fs.writable(); err != nil {
		return 0, err
	}
	for n := range fs.nodes.DirtyNodes() {
		if err := fs.commit(n); err != nil {
			return 0, err
		}
	}
	if err := fs.flushBitmap(); err != nil {
		return 0, err
	}
	if err := fs.flushFAT(); err != nil {
		return 0, err
	}
	if err := fatcore.SyncDevice(fs.w); err != nil {
		return 0, fmt.Errorf("exfat: syncing device: %w", err)
	}
	var tails []renameTail
	done := 0
	var err error
	fs.renameTails = &tails
	defer func() { fs.renameTails = nil }()
	for _, p := range pairs {
		if rerr := fs.paths.RenameHeld(p[0], p[1]); rerr != nil {
			err = &os.LinkError{Op: "rename", Old: p[0], New: p[1], Err: rerr}
			break
		}
		done++
	}
	if len(tails) == 0 {
		return done, err
	}
	// The renames done are completed even after an error.
	if serr := fatcore.SyncDevice(fs.w); serr != nil {
		return 0, fmt.Errorf("exfat: syncing device: %w", serr)
	}
	freed := false
	for _, t := range tails {
		if rerr := t.sp.remove(t.se); rerr != nil {
			return 0, rerr
		}
		if t.replaced.N > 0 {
			fs.freeChain(t.replaced)
			freed = true
		}
	}
	if freed {
		if ferr := fs.flushBitmap(); ferr != nil {
			return 0, ferr
		}
	}
	return done, err
}

// renameTail is what is left of a rename after its barrier: the old set
// to remove, the clusters it replaced to free.
type renameTail struct {
	sp       *dirCache
	se       *entry
	replaced chain
}
