package archive

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// RepairPlan is what Check found in an archive, and what Repair would do
// about it. Nothing in it is a guess: a member is kept only if its index
// entry and every chunk of its record authenticate.
type RepairPlan struct {
	// Sound: the file is exactly its commits, all of them intact:
	// nothing to repair.
	Sound bool
	// Keep members (KeepBytes of contents) are kept by a repair.
	Keep      int
	KeepBytes int64
	// Lost members are named by the index but their records do not
	// authenticate (damaged or cut off): a repair drops them.
	Lost      []LostMember
	LostBytes int64
	// LostCommits could not have their index read at all, PartCommits
	// only in part: members they added are missing (those not found
	// elsewhere), and members they removed may be back.
	LostCommits []uint64
	PartCommits []uint64
	// Recovered commits have a footer that does not authenticate (cut
	// short, as by a truncation, or damaged) but an index that does:
	// their members are kept, although opening the archive does not see
	// them.
	Recovered []uint64
	// Tail bytes after the newest commit that can be used hold nothing
	// that authenticates (an append that never committed, or what is
	// left of a commit cut short): a repair removes them.
	Tail int64
	// Rebuild: the repair writes the kept members into a new file
	// (renamed over the archive, like Compact). Otherwise it only cuts
	// the file to TruncateAt bytes, removing Dropped bytes.
	Rebuild    bool
	TruncateAt int64
	Dropped    int64
	FileSize   int64
	// Problems are Verify's findings in the commits that open, if they do.
	Problems []string
	// KeptCommit is the commit a cut leaves as the newest (without
	// Rebuild); FromCommit the newest whose footer authenticates.
	KeptCommit, FromCommit uint64

	keep []*salvOp
}

// LostMember is a member a repair cannot keep.
type LostMember struct {
	Name   string
	Size   int64
	Reason string
}

// Check finds what is wrong with the archive at path and what Repair
// would do, changing nothing. It reads the whole file.
func Check(ctx context.Context, path string, cred Credentials) (*RepairPlan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	a := &Archive{path: path, f: f, readOnly: true}
	if err := a.unlockHeader(ctx, cred); err != nil {
		return nil, err
	}
	defer a.k.wipe()
	return a.plan(ctx)
}

// Check is Check for the file of an open archive (also one opened with
// OpenOptions.Salvage), without deriving the keys again. It reads the
// whole file as it is on disk now.
func (a *Archive) Check(ctx context.Context) (*RepairPlan, error) {
	a.mu.RLock()
	if err := a.usable(); err != nil {
		a.mu.RUnlock()
		return nil, err
	}
	b := &Archive{path: a.path, f: a.f, readOnly: true, hdr: a.hdr, k: a.k}
	a.mu.RUnlock()
	return b.plan(ctx)
}

// plan examines a.f, whose header is unlocked.
func (a *Archive) plan(ctx context.Context) (*RepairPlan, error) {
	st, err := a.f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	p := &RepairPlan{FileSize: size}
	// The newest commit whose whole index loads, as a repair before
	// salvage did: if nothing else is wrong, cutting the file there is
	// all a repair needs.
	var intact *Archive
	if err := a.loadIndex(ctx, true); err == nil {
		intact = a
		p.KeptCommit = a.last.gen
		if _, ft, err := findFooter(a.f, a.k, &a.hdr.fileID, size); err == nil {
			p.FromCommit = ft.gen
		}
		r, err := a.Verify(ctx, nil)
		if err != nil {
			return nil, err
		}
		p.Problems = r.Problems
	} else if !errors.Is(err, ErrDamaged) {
		return nil, err
	}
	s, err := collectSalvage(ctx, a.f, a.k, &a.hdr, size)
	if err != nil {
		return nil, err
	}
	p.LostCommits, p.PartCommits, p.Recovered = s.lost, s.partial, s.unauth
	p.Tail = size - s.end
	all := s.members()
	if intact != nil && p.KeptCommit == p.FromCommit && sameMembers(intact.idx, all) {
		// The newest index loads and names exactly what the salvage
		// found: the unreadable segments were superseded ones (Verify's
		// problems name them), and nothing is lost through them.
		p.LostCommits, p.PartCommits = nil, nil
	}
	for _, o := range all {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if o.kind == opFile {
			if err := authenticateRecord(ctx, a.f, a.k, &a.hdr, &o.op); err != nil {
				if !errors.Is(err, ErrDamaged) {
					return nil, err
				}
				p.Lost = append(p.Lost, LostMember{Name: string(o.name), Size: o.size, Reason: lostReason(err, o, size)})
				p.LostBytes += o.size
				continue
			}
			p.KeepBytes += o.size
		}
		p.keep = append(p.keep, o)
	}
	p.Keep = len(p.keep)
	if intact != nil && len(p.Problems) == 0 && len(p.Lost) == 0 && len(p.Recovered) == 0 && sameMembers(intact.idx, p.keep) {
		p.TruncateAt = intact.end()
		p.Dropped = size - p.TruncateAt
		p.Sound = p.Dropped == 0
		return p, nil
	}
	p.Rebuild = true
	return p, nil
}

func lostReason(err error, o *salvOp, size int64) string {
	if o.offset+StreamLen(o.size) > size {
		return "its record is cut off (the file ends inside it)"
	}
	return "its record does not authenticate: " + err.Error()
}

// sameMembers reports whether the live members of x are exactly ops.
func sameMembers(x *index, ops []*salvOp) bool {
	if x.live != len(ops) {
		return false
	}
	for _, o := range ops {
		pos := x.find(o.name)
		if pos < 0 {
			return false
		}
		e := &x.ents[pos]
		if e.kind != o.kind || e.mode != o.mode || e.mtime != o.mtime ||
			(o.kind == opFile && (e.offset != o.offset || e.size != o.size || e.nonce != o.nonce)) {
			return false
		}
	}
	return true
}

// RepairReport says what Repair did.
type RepairReport struct {
	Truncated  int64  // bytes cut from the end of the file (without Rebuilt)
	FromCommit uint64 // the newest commit found intact before repair (0 if none)
	KeptCommit uint64 // the commit the archive now ends with
	Members    int
	// Rebuilt: the kept members were written into a new file, renamed
	// over the archive.
	Rebuilt bool
	// Plan is what Check found before the repair.
	Plan *RepairPlan
}

// Repair makes the archive sound again keeping every member that can still
// be authenticated (see RepairPlan, which Check returns without changing
// anything). When the only trouble is bytes after a complete commit -- the
// torn tail of an interrupted append, or newer commits none of whose
// members can be read -- it cuts them off. Otherwise it writes the members
// it can authenticate into a new file beside the archive, which takes the
// archive's name, mode and (where the process may set it) owner when
// complete, as Compact does; members that cannot be authenticated are
// dropped. The writer lock is held throughout.
func Repair(ctx context.Context, path string, cred Credentials) (RepairReport, error) {
	return repair(ctx, path, cred, false)
}

func repair(ctx context.Context, path string, cred Credentials, noSync bool) (RepairReport, error) {
	var rep RepairReport
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return rep, err
	}
	a := &Archive{path: path, f: f, noSync: noSync}
	defer a.closeFiles()
	if a.unlock, err = lockFile(f); err != nil {
		return rep, err
	}
	if err := a.unlockHeader(ctx, cred); err != nil {
		return rep, err
	}
	defer a.k.wipe()
	p, err := a.plan(ctx)
	if err != nil {
		return rep, err
	}
	rep.Plan = p
	rep.FromCommit = p.FromCommit
	rep.Members = p.Keep
	if !p.Rebuild {
		rep.KeptCommit = p.KeptCommit
		rep.Truncated = p.Dropped
		if p.Dropped == 0 {
			return rep, nil
		}
		if err := f.Truncate(p.TruncateAt); err != nil {
			return rep, err
		}
		if noSync {
			return rep, nil
		}
		return rep, f.Sync()
	}
	idx, err := salvageIndex(p.keep)
	if err != nil {
		return rep, err
	}
	tf, err := atomicfile.Create(path, atomicfile.Options{KeepMode: true, NoSync: noSync})
	if err != nil {
		return rep, err
	}
	defer tf.Discard()
	if _, err := a.writeBase(ctx, tf.File, idx, nil); err != nil {
		return rep, err
	}
	// Other processes open the new file once it has the name; this one
	// still holds the old file's lock until it returns -- except on
	// Windows, which renames over no open file: there the old file is
	// closed first (as Compact does, see replace.go).
	if replaceByReopening {
		a.closeFiles()
		a.f = nil
	}
	if err := tf.Rename(); err != nil && !tf.Renamed() {
		return rep, err
	} else if err != nil {
		return rep, fmt.Errorf("repaired, but syncing the directory failed: %w", err)
	}
	rep.Rebuilt, rep.KeptCommit = true, 1
	return rep, nil
}

// Salvaged describes an archive opened with OpenOptions.Salvage whose
// index did not load: its members are what the readable parts of the
// index name (see RepairPlan). Nil for an archive that opened normally.
type Salvaged struct {
	LostCommits []uint64
	PartCommits []uint64
	Recovered   []uint64
}

// openSalvaged replaces a failed load by the salvage of the file's index:
// the archive is then read-only.
func (a *Archive) openSalvaged(ctx context.Context, cred Credentials) error {
	if a.k == nil {
		if err := a.unlockHeader(ctx, cred); err != nil {
			return err
		}
	}
	st, err := a.f.Stat()
	if err != nil {
		return err
	}
	s, err := collectSalvage(ctx, a.f, a.k, &a.hdr, st.Size())
	if err != nil {
		return err
	}
	idx, err := salvageIndex(s.members())
	if err != nil {
		return err
	}
	a.idx, a.readOnly = idx, true
	a.lastAt, a.tail = s.end-footerSize, st.Size()-s.end
	a.last = footer{gen: s.endGen}
	a.salvaged = &Salvaged{LostCommits: s.lost, PartCommits: s.partial, Recovered: s.unauth}
	return nil
}

// Salvaged reports how an archive opened with OpenOptions.Salvage was
// pieced together, or nil if it opened normally.
func (a *Archive) Salvaged() *Salvaged {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.salvaged
}

// TailReport describes the bytes after the newest complete commit.
type TailReport struct {
	Bytes int64 // after the newest complete commit (Tail)
	// Commit is the number of a commit found there whose footer does not
	// authenticate (cut short) but whose index does, 0 if none: Repair
	// recovers it, and a change to the archive before that would cut it
	// off. Puts and Deletes count the changes it made.
	Commit        uint64
	Puts, Deletes int
}

// TailReport looks at the tail: whether it holds a commit Repair can
// recover. It reads at most 64 MiB from the end of the file.
func (a *Archive) TailReport(ctx context.Context) (TailReport, error) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	r := TailReport{Bytes: a.tail}
	if a.tail == 0 || a.salvaged != nil {
		return r, a.usable()
	}
	if err := a.usable(); err != nil {
		return r, err
	}
	s := &salvage{latest: map[string]*salvOp{}}
	_, ft, ok, err := s.looseTail(ctx, a.f, a.k, &a.hdr, a.end(), a.end()+a.tail, a.last.gen, a.lastAt)
	if err != nil || !ok {
		return r, err
	}
	r.Commit = ft.gen
	for _, o := range s.latest {
		if o.gen != ft.gen {
			continue
		}
		if o.kind == opDelete {
			r.Deletes++
		} else {
			r.Puts++
		}
	}
	return r, nil
}
