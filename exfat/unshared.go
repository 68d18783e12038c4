package exfat

import "fmt"

// ensureUnshared makes sure, once per session, that no cluster is
// claimed by two files or directories (a cross-link, or two names of one
// chain that an interrupted rename left) before anything is freed:
// freeing a shared cluster would hand the other file's data to the next
// allocation. It walks the whole tree with the checker; if it finds
// sharing, this change and every later one is refused with
// ErrNeedsRepair (the same guard as package fat's).
func (fs *FS) ensureUnshared() error {
	if fs.verified {
		return nil
	}
	if fs.needsRepair != nil {
		return fs.needsRepair
	}
	r, err := fs.check(false)
	if err != nil {
		return err
	}
	shared := ""
	switch {
	case len(r.CrossLinks) > 0:
		shared = r.CrossLinks[0]
	case len(r.Duplicates) > 0:
		shared = r.Duplicates[0]
	default:
		fs.verified = true
		return nil
	}
	fs.needsRepair = fmt.Errorf("%w (%s)", ErrNeedsRepair, shared)
	return fs.needsRepair
}
