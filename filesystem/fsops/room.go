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
	MakesRoom() bool
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

// makesRoom reports whether t gives directories their room in one step.
func makesRoom(t Target) bool {
	m, ok := t.(roomMaker)
	return ok && m.MakesRoom()
}

// mkdirFunc returns how Put makes (or readies) a directory of t, which
// makes room: with its room.
func (r dirRoom) mkdirFunc(t Target) func(dir string) error {
	m := t.(roomMaker)
	return func(dir string) error { return m.MakeRoom(dir, r[path.Clean(dir)]) }
}

// readyDirs gives the directories that exist and that no job makes (the
// destination of the files put into it) their room, before the first
// file; one missing is not made (the file's creation says so).
func readyDirs(t Target, jobs []putJob, mkdir func(string) error) error {
	made := map[string]bool{}
	for _, j := range jobs {
		if j.dir {
			made[path.Clean(j.dest)] = true
		}
	}
	for _, j := range jobs {
		if d := path.Dir(j.dest); !j.dir && !made[d] {
			made[d] = true
			if fi, err := t.Stat(d); err == nil && fi.IsDir() {
				if err := mkdir(d); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
