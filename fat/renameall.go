package fat

import (
	"os"

	"github.com/cryptvol/cryptvol/internal/fatcore"
)

// RenameAll renames each pair's [0] onto its [1] as Rename does, for the
// flushes of one rename however many pairs there are (issue 31: put of
// 1,000 files paid two flushes for each). It keeps Rename's order of
// writes, applied to every pair at once: every source is marked as being
// moved; after a barrier every new entry is written (or a replaced file's
// entry pointed at the moved data); after a second every source is erased
// and the clusters of the replaced files freed. A crash in between leaves
// what an interrupted Rename leaves, for as many files: the next writable
// Open completes each rename whose new entry reached the disk and undoes
// the others. The first barrier also puts on the disk every file's content
// written before the call, so no name is ever seen pointing at clusters
// not yet written.
//
// A pair that is not a closed regular file moving onto a free name or
// onto another closed regular file of the same spelling goes through
// Rename on its own, in its turn. RenameAll returns how many pairs, from
// the first, were renamed: after an error, those after are as they were.
func (fs *FS) RenameAll(pairs [][2]string) (int, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	done := 0
	for done < len(pairs) {
		n, err := fs.renameBatch(pairs[done:])
		done += n
		if err != nil {
			return done, err
		}
		if done < len(pairs) {
			// Not batchable: alone, with Rename's own barriers.
			p := pairs[done]
			if err := fs.paths.RenameHeld(p[0], p[1]); err != nil {
				return done, &os.LinkError{Op: "rename", Old: p[0], New: p[1], Err: err}
			}
			done++
		}
	}
	return done, nil
}

// batchedRename is one pair of a batch, resolved.
type batchedRename struct {
	sp, dp   *dirCache
	se, de   *entry
	name     string
	replaced uint32 // the chain de held, freed at the end
}

// renameBatch renames the leading pairs that can be batched and returns
// how many it renamed; it stops before the first that cannot.
func (fs *FS) renameBatch(pairs [][2]string) (int, error) {
	var batch []batchedRename
	sources := map[*entry]bool{}
	dests := map[*entry]bool{}
	type destKey struct {
		d   *dirCache
		key string
	}
	names := map[destKey]bool{}
	for _, p := range pairs {
		sp, se, dp, de, name, err := fatcore.RenameEnds(p[0], p[1], fs.writable, fs.resolve, nil)
		if err != nil || checkName(name) != nil || sp.corrupt() != nil || dp.corrupt() != nil {
			break // Rename says what is wrong
		}
		k := destKey{dp, foldName(name)}
		plain := func(e *entry) bool { return !e.isDir() && e.node == nil && e.damageKind == damageNone && !e.moving() }
		if !plain(se) || de == se || sources[se] || dests[se] || names[k] || de != nil && (!plain(de) || de.name != name || dests[de] || sources[de]) {
			break
		}
		if de != nil && de.start != 0 {
			// The replaced clusters will be freed.
			if err := fs.ensureUnshared(); err != nil {
				return 0, &os.LinkError{Op: "rename", Old: p[0], New: p[1], Err: err}
			}
		}
		sources[se], names[k] = true, true
		if de != nil {
			dests[de] = true
		}
		b := batchedRename{sp: sp, dp: dp, se: se, de: de, name: name}
		if de != nil {
			b.replaced = de.start
		}
		batch = append(batch, b)
	}
	if len(batch) == 0 {
		return 0, nil
	}
	// The files' chains, then every mark, before the barrier.
	if err := fs.flushFAT(); err != nil {
		return 0, err
	}
	for _, b := range batch {
		if err := b.sp.markMoving(b.se); err != nil {
			return 0, err
		}
	}
	if err := fs.barrier(); err != nil {
		return 0, err
	}
	// The new entries. One that cannot be placed (a full root directory)
	// ends the batch there: the renames before it are completed, the
	// sources after it unmarked.
	placed := 0
	var placeErr error
	for _, b := range batch {
		if b.de != nil {
			b.de.takeMoved(b.se)
			placeErr = b.dp.update(b.de)
		} else {
			var short shortName
			var nt byte
			var k, s int
			if short, nt, k, placeErr = b.dp.shortFor(b.name, nil); placeErr == nil {
				if s, placeErr = b.dp.place(k); placeErr == nil {
					placeErr = b.dp.writeEntry(b.dp.encodeNew(b.name, b.se, short, nt, s, k))
				}
			}
		}
		if placeErr != nil {
			break
		}
		placed++
	}
	if err := fs.barrier(); err != nil {
		return 0, err
	}
	for _, b := range batch[placed:] {
		b.se.nt &^= ntMoving
		if err := b.sp.update(b.se); err != nil {
			return 0, err
		}
	}
	for _, b := range batch[:placed] {
		if err := b.sp.remove(b.se); err != nil {
			return 0, err
		}
		if b.replaced != 0 {
			fs.freeChain(b.replaced)
		}
	}
	if err := fs.flushFAT(); err != nil {
		return placed, err
	}
	if placeErr != nil {
		p := pairs[placed]
		return placed, &os.LinkError{Op: "rename", Old: p[0], New: p[1], Err: placeErr}
	}
	return placed, nil
}

// takeMoved gives de, the entry a rename replaces, the data and metadata
// of e, the entry moved onto it.
func (de *entry) takeMoved(e *entry) {
	de.attr, de.start, de.size = e.attr, e.start, e.size
	de.cdate, de.ctime, de.ccenti = e.cdate, e.ctime, e.ccenti
	de.adate, de.mdate, de.mtime = e.adate, e.mdate, e.mtime
	de.nt &^= ntMoving
	de.node = nil
}
