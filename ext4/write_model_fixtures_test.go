package ext4

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

// modelOps applies single operations to the writer and to the model, with
// the same bookkeeping as modelRun, for the things a model test must hold
// whatever the random operations did (modelRun may remove or rename
// anything it made).
type modelOps struct {
	t     *testing.T
	w     *Writer
	m     *model
	clock *modelClock
}

func (o modelOps) touchParent(p string) { o.m.paths[path.Dir(p)].mtime = o.clock.t }

// check fails the test on any error but ErrNoSpace, which it returns.
func (o modelOps) check(what string, err error) error {
	o.t.Helper()
	if err != nil && !errors.Is(err, ErrNoSpace) {
		o.t.Fatalf("%s: %v", what, err)
	}
	return err
}

func (o modelOps) mkdir(p string) error {
	if err := o.check("mkdir "+p, o.w.Mkdir(p)); err != nil {
		return err
	}
	o.m.nextID++
	o.m.paths[p] = &mnode{id: o.m.nextID, dir: true, mode: fs.ModeDir | 0o755, nlink: 2, mtime: o.clock.t}
	o.m.paths[path.Dir(p)].nlink++
	o.touchParent(p)
	return nil
}

// put creates p with data, written in chunks of 1 MiB. A file that does
// not fit is removed again and ErrNoSpace returned.
func (o modelOps) put(p string, data []byte) error {
	f, err := o.w.Create(p)
	if err := o.check("create "+p, err); err != nil {
		return err
	}
	o.m.nextID++
	n := &mnode{id: o.m.nextID, mode: 0o644, mtime: o.clock.t, nlink: 1}
	o.m.paths[p] = n
	o.touchParent(p)
	for off := 0; off < len(data); off += 1 << 20 {
		chunk := data[off:min(len(data), off+1<<20)]
		if _, err := f.Write(chunk); o.check("write "+p, err) != nil {
			f.Close()
			o.remove(p)
			return err
		}
		n.data = append(n.data, chunk...)
		n.mtime = o.clock.t
	}
	return o.check("close "+p, f.Close())
}

func (o modelOps) link(old, p string) error {
	if err := o.check("link "+p, o.w.Link(old, p)); err != nil {
		return err
	}
	o.m.paths[p] = o.m.paths[old]
	o.m.paths[p].nlink++
	o.touchParent(p)
	return nil
}

func (o modelOps) symlink(target, p string) error {
	if err := o.check("symlink "+p, o.w.Symlink(target, p)); err != nil {
		return err
	}
	o.m.nextID++
	o.m.paths[p] = &mnode{id: o.m.nextID, target: target, mode: fs.ModeSymlink | 0o777, mtime: o.clock.t, nlink: 1}
	o.touchParent(p)
	return nil
}

// remove unlinks a file, a link or an empty directory.
func (o modelOps) remove(p string) {
	o.t.Helper()
	n := o.m.paths[p]
	if err := o.w.Remove(p); err != nil {
		o.t.Fatalf("remove %s: %v", p, err)
	}
	delete(o.m.paths, p)
	n.nlink--
	if n.dir {
		o.m.paths[path.Dir(p)].nlink--
	}
	o.touchParent(p)
}

// withRoom runs op, removing the largest regular files outside keep (a
// directory) until it fits: the random operations may have filled the
// filesystem.
func (o modelOps) withRoom(keep string, op func() error) {
	o.t.Helper()
	for {
		err := op()
		if err == nil {
			return
		}
		victim := ""
		for p, n := range o.m.paths {
			if n.dir || n.target != "" || strings.HasPrefix(p, keep+"/") {
				continue
			}
			if v := o.m.paths[victim]; victim == "" || len(n.data) > len(v.data) || len(n.data) == len(v.data) && p < victim {
				victim = p
			}
		}
		if victim == "" {
			o.t.Fatalf("%v, and nothing left to remove", err)
		}
		o.remove(victim)
	}
}

// fixtureStats says what a fixture tree holds, for the test's log.
type fixtureStats struct {
	depth   int    // directories below the fixture's root
	big     string // the large file
	bigSize int
}

// addFixtures makes /deep-<tag>: a chain of depth nested directories, one
// with a 255-byte name in 3-byte characters, holding a file of bigSize
// bytes under a 255-byte name with 4-byte characters; two more names of
// that file (hard links), a fast and a slow symbolic link, an empty file,
// a 255-byte ASCII name, and é in NFC and NFD (two names to ext4).
func addFixtures(o modelOps, r *rand.Rand, tag string, depth, bigSize int) fixtureStats {
	o.t.Helper()
	root := "/deep-" + tag
	if o.m.paths[root] != nil {
		o.t.Fatalf("%s exists already", root)
	}
	room := func(op func() error) { o.withRoom(root, op) }
	room(func() error { return o.mkdir(root) })
	dir, middle := root, ""
	for i := 1; i <= depth; i++ {
		name := fmt.Sprintf("lvl-%02d", i)
		if i == depth/2 {
			name = strings.Repeat("日", MaxNameLen/3) // 255 bytes
		}
		dir = path.Join(dir, name)
		room(func() error { return o.mkdir(dir) })
		if i == depth/2 {
			middle = dir
		}
	}
	big := path.Join(dir, strings.Repeat("😀", MaxNameLen/4)+"end"[:MaxNameLen%4])
	data := make([]byte, bigSize)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	room(func() error { return o.put(big, data) })
	room(func() error { return o.link(big, path.Join(root, "hard-ü-"+tag)) })
	room(func() error { return o.link(big, path.Join(middle, "hard")) })
	room(func() error { return o.symlink("lvl-01", path.Join(root, "fast")) })
	var slow []string
	for i := 1; i <= min(depth, 20); i++ {
		slow = append(slow, fmt.Sprintf("lvl-%02d", i))
	}
	room(func() error { return o.symlink(strings.Join(slow, "/")+"/→ü", path.Join(root, "slow")) })
	room(func() error { return o.put(path.Join(root, "empty"), nil) })
	room(func() error {
		return o.put(path.Join(root, strings.Repeat("n", MaxNameLen-1)+tag[:1]), []byte("255 bytes"))
	})
	room(func() error { return o.put(path.Join(root, "\u00e9"), []byte("NFC")) })
	room(func() error { return o.put(path.Join(root, "e\u0301"), []byte("NFD")) })
	return fixtureStats{depth: depth, big: big, bigSize: bigSize}
}
