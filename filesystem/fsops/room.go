package fsops

import (
	"path"

	"github.com/cryptvol/cryptvol/internal/atomicfile"
)

// roomMaker is a target whose directories are best given, in one step,
// the room for the entries a put adds (Tree over a
// filesystem.RoomMaker: FAT, whose directory grows for a barrier each
// time it fills).
type roomMaker interface {
	MakeRoom(dir string, names []string) error
}

// dirRoom is, for each directory a put writes files into, the names of
// the entries it will add: the new files' names, and the temporary names
// that are there at once (one per file put on its own, up to a batch's
// worth when put batches its renames; a file replaced keeps its entry).
type dirRoom map[string][]string

// planRoom lists the entries jobs add to each directory; temps bounds
// the temporary names a directory holds at once.
func planRoom(jobs []putJob, temps int) dirRoom {
	r := dirRoom{}
	staged := map[string]int{}
	for _, j := range jobs {
		if j.dir {
			continue
		}
		dir, base := path.Split(j.dest)
		dir = path.Clean(dir)
		if !j.replaces {
			r[dir] = append(r[dir], base)
		}
		if staged[dir] < temps {
			staged[dir]++
			r[dir] = append(r[dir], atomicfile.TempName(base))
		}
	}
	return r
}

// mkdirFunc returns how Put makes (or readies) a directory of t: with its
// room where t makes room, as MkdirAll elsewhere.
func (r dirRoom) mkdirFunc(t Target) func(dir string) error {
	m, ok := t.(roomMaker)
	if !ok {
		return t.MkdirAll
	}
	return func(dir string) error { return m.MakeRoom(dir, r[path.Clean(dir)]) }
}
