package fsops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
)

// A rename into place costs FAT two flushes (the source marked, then the
// new entry, each on the disk before what follows), and put renames every
// file it writes: 2,000 flushes for 1,000 small files, 23 times the time
// of the same put without them (issue 31, item 4). So where the
// filesystem can rename many files for the flushes of one
// (filesystem.BatchRenamer: FAT, exFAT), Put stages files under their
// temporary names and renames them into place together. Nothing of the
// order of writes is lost: each file's content is on the disk before its
// name (RenameAll's first barrier), each rename keeps its own order (its
// barriers, shared), and the command's last flush still comes before it
// says done. A power cut in the middle leaves files of earlier batches
// in place and those of the current one under temporary names, which the
// next put into that directory sweeps away.
//
// The batch is bounded by PutOptions.BatchFiles (FAT keeps the slots of
// the temporary names, a long name each, in the directory, deleted, once
// the files are renamed, so a bigger batch grows a directory of many
// files for good) and by batchTime, which bounds what a power cut can
// leave unpublished and keeps a batch's few flushes small beside the work
// it holds.
const batchTime = time.Second

// putBatch is the files staged under temporary names, waiting to be
// renamed into place.
type putBatch struct {
	s       *stager
	r       batchRenamer
	max     int
	pairs   [][2]string // temporary name, destination
	started time.Time
}

// newPutBatch returns a batch for s's target, or nil when its filesystem
// renames each file for its own flushes anyway (ext4, whose journal
// commits many renames at once; NTFS, through its driver) or max is 0.
func newPutBatch(s *stager, max int) *putBatch {
	r, ok := s.t.(batchRenamer)
	if !ok || !r.BatchesRenames() || max <= 0 {
		return nil
	}
	return &putBatch{s: s, r: r, max: max}
}

// put stages the file of j and publishes the batch once it is full.
func (b *putBatch) put(ctx context.Context, j putJob) error {
	if j.link != "" {
		return b.s.putLink(j)
	}
	tmp, err := b.s.stage(ctx, j)
	if err != nil && errors.Is(err, filesystem.ErrNoSpace) && len(b.pairs) > 0 && j.in == nil {
		// The staged files' temporary names may be what fills the
		// directory (FAT12/16's root has a fixed size), or the files
		// they replace what fills the volume: both are freed once the
		// batch is in place. Standard input cannot be read twice.
		if perr := b.publish(); perr != nil {
			return perr
		}
		tmp, err = b.s.stage(ctx, j)
	}
	if err != nil {
		return err
	}
	if len(b.pairs) == 0 {
		b.started = time.Now()
	}
	b.pairs = append(b.pairs, [2]string{tmp, j.dest})
	if len(b.pairs) >= b.max || time.Since(b.started) >= batchTime {
		return b.publish()
	}
	return nil
}

// publish renames the staged files into place. A rename that fails for
// want of room (a full fixed-size root directory) after others went
// through is tried again: those freed their temporary names' slots. What
// cannot be put in place is removed.
func (b *putBatch) publish() error {
	pairs := b.pairs
	b.pairs = nil
	for len(pairs) > 0 {
		n, err := b.r.RenameAll(pairs)
		pairs = pairs[n:]
		if err == nil && n == 0 {
			err = errors.New("no file renamed") // never: RenameAll renames all or fails
		}
		if err != nil && (n == 0 || !errors.Is(err, filesystem.ErrNoSpace)) {
			for _, p := range pairs {
				b.s.t.Remove(p[0])
			}
			return kind(Failed, fmt.Errorf("%s: %w", pairs[0][1], err))
		}
	}
	return nil
}
