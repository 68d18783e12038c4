package ext4

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/internal/fspath"
)

var (
	errNotDir   = fspath.ErrNotDir
	errNotExist = fs.ErrNotExist
)

// MaxNameLen is the longest name a directory entry holds, in bytes.
const MaxNameLen = 255

// splitPath cleans name into its parent directory and last component,
// checking the component before anything is written.
func splitPath(name string) (dir, base string, err error) {
	clean := path.Clean("/" + name)
	if clean == "/" {
		return "", "", fs.ErrInvalid
	}
	dir, base = path.Split(clean)
	if len(base) > MaxNameLen {
		return "", "", fmt.Errorf("%w (%d bytes)", ErrNameTooLong, len(base))
	}
	if strings.ContainsRune(base, 0) {
		return "", "", fs.ErrInvalid
	}
	return dir, base, nil
}

// parentOf resolves the directory that holds name. Callers hold w.mu.
func (w *Writer) parentOf(op, name string) (*dirHandle, string, error) {
	dir, base, err := splitPath(name)
	if err != nil {
		return nil, "", fspath.PathError(op, name, err)
	}
	in, err := w.lookup(op, dir, true)
	if err != nil {
		return nil, "", err
	}
	if !in.isDir() {
		return nil, "", fspath.PathError(op, name, errNotDir)
	}
	d, err := w.openDir(in.ino)
	if err != nil {
		return nil, "", fspath.PathError(op, name, err)
	}
	return d, base, nil
}

// child is the inode name has in directory d, or 0.
func (w *Writer) child(d *dirHandle, name string) (uint32, error) {
	in, err := w.readInode(d.ino)
	if err != nil {
		return 0, err
	}
	dc, err := w.readDir(in)
	if err != nil {
		return 0, err
	}
	if i, ok := dc.byName[name]; ok {
		return dc.ents[i].ino, nil
	}
	return 0, nil
}

// touchDir sets a directory's mtime and ctime and writes its inode.
func (w *Writer) touchDir(d *dirHandle) error {
	now := w.opTime
	setTime(d.raw, 0x10, 0x88, now)
	setTime(d.raw, 0xC, 0x84, now)
	return w.writeInode(d.ino, d.raw)
}

// done flushes the allocation state after an operation (also after a
// failed one, whose allocations were undone).
func (w *Writer) done(op, name string, err error) error {
	if ferr := w.flush(); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil {
		if _, ok := err.(*fs.PathError); !ok {
			err = fspath.PathError(op, name, err)
		}
	}
	return err
}

// newChild allocates an inode and links it as base in d. The record is
// written only once the name is in place; on failure nothing is left.
func (w *Writer) newChild(d *dirHandle, base string, raw []byte) (uint32, error) {
	dir := rawMode(raw)&sIFMT == sIFDIR
	g := (d.ino - 1) / w.inodesPerGroup
	saved := map[uint32]uint64{}
	for k := uint32(0); k < w.groups; k++ {
		saved[k] = w.m.itableUnused(k)
	}
	ino, err := w.a.allocInode(g, dir)
	if err != nil {
		return 0, err
	}
	undo := func() {
		w.a.freeInode(ino, dir)
		ig := (ino - 1) / w.inodesPerGroup
		w.m.setItableUnused(ig, saved[ig])
	}
	if err := w.writeInode(ino, raw); err != nil {
		undo()
		return 0, err
	}
	if err := w.addEntry(d, base, ino, ftypeOf(rawMode(raw))); err != nil {
		undo()
		return 0, err
	}
	return ino, nil
}

// Create makes the regular file name (mode 0644, owner 0:0), or empties
// it when it exists, and opens it for reading and writing.
func (w *Writer) Create(name string) (*WFile, error) {
	w.lock()
	defer w.mu.Unlock()
	d, base, err := w.parentOf("create", name)
	if err != nil {
		return nil, err
	}
	ino, err := w.child(d, base)
	if err != nil {
		return nil, w.done("create", name, err)
	}
	if ino != 0 {
		raw, err := w.m.readRawInode(ino)
		if err != nil {
			return nil, w.done("create", name, err)
		}
		switch rawMode(raw) & sIFMT {
		case sIFDIR:
			return nil, fspath.PathError("create", name, fspath.ErrIsDir)
		case sIFREG:
		default:
			return nil, fspath.PathError("create", name, fmt.Errorf("%w: replacing a link or special file", fs.ErrExist))
		}
		fm, err := w.loadMap(ino, raw)
		if err == nil {
			err = w.truncate(ino, raw, fm, 0)
		}
		if err == nil {
			now := w.opTime
			setTime(raw, 0x10, 0x88, now)
			setTime(raw, 0xC, 0x84, now)
			err = w.writeInode(ino, raw)
		}
		if err = w.done("create", name, err); err != nil {
			return nil, err
		}
		return &WFile{w: w, ino: ino, gen: binary.LittleEndian.Uint32(raw[inoGeneration:]), name: name}, nil
	}
	raw := w.newInode(sIFREG|0o644, 0, 0, 1)
	ino, err = w.newChild(d, base, raw)
	if err == nil {
		err = w.touchDir(d)
	}
	if err = w.done("create", name, err); err != nil {
		return nil, err
	}
	return &WFile{w: w, ino: ino, gen: binary.LittleEndian.Uint32(raw[inoGeneration:]), name: name}, nil
}

// Mkdir makes the directory name (mode 0755, owner 0:0).
func (w *Writer) Mkdir(name string) error {
	w.lock()
	defer w.mu.Unlock()
	d, base, err := w.parentOf("mkdir", name)
	if err != nil {
		return err
	}
	if ino, err := w.child(d, base); err != nil || ino != 0 {
		if err == nil {
			err = fs.ErrExist
		}
		return fspath.PathError("mkdir", name, err)
	}
	return w.done("mkdir", name, w.mkdir(d, base))
}

func (w *Writer) mkdir(d *dirHandle, base string) error {
	// Its block, and one for the parent should it grow.
	if w.a.totalFreeB < 2 || w.a.totalFreeI < 1 {
		return fmt.Errorf("%w", ErrNoSpace)
	}
	raw := w.newInode(sIFDIR|0o755, 0, 0, 2)
	g := (d.ino - 1) / w.inodesPerGroup
	blk, err := w.a.allocMeta(w.m.groupFirstBlock(g))
	if err != nil {
		return err
	}
	fm := &fileMap{runs: []run{{logical: 0, phys: blk, length: 1}}}
	setRawSize(raw, w.blockSize)
	ino, err := w.newChild(d, base, raw)
	if err != nil {
		w.a.freeBlocks(blk, 1)
		return err
	}
	if err := w.storeMap(ino, raw, fm); err != nil {
		return err
	}
	nd := &dirHandle{ino: ino, raw: raw, fm: fm}
	b := make([]byte, w.blockSize)
	usable := int(w.blockSize)
	if w.m.csum {
		usable -= dirTailSize
	}
	w.putEntry(b, ino, 12, ".", ftDir)
	w.putEntry(b[12:], d.ino, usable-12, "..", ftDir)
	if err := w.writeDirBlock(nd, blk, b); err != nil {
		return err
	}
	if err := w.writeInode(ino, raw); err != nil {
		return err
	}
	w.addDirLink(d.raw, 1)
	return w.touchDir(d)
}

// addDirLink changes a directory's link count by delta (a subdirectory's
// ".." came or went). With dir_nlink a count past 65000 is 1, "many".
func (w *Writer) addDirLink(raw []byte, delta int) {
	n := int(rawLinks(raw))
	if n == 1 && w.roCompat&roCompatDirNlink != 0 {
		return
	}
	n += delta
	if n >= 65000 && w.roCompat&roCompatDirNlink != 0 {
		n = 1
	}
	setRawLinks(raw, uint16(max(n, 0)))
}

// Remove deletes a file (its name; the inode when it was the last) or an
// empty directory.
func (w *Writer) Remove(name string) error {
	w.lock()
	defer w.mu.Unlock()
	d, base, err := w.parentOf("remove", name)
	if err != nil {
		return err
	}
	ino, err := w.child(d, base)
	if err == nil && ino == 0 {
		err = errNotExist
	}
	if err != nil {
		return fspath.PathError("remove", name, err)
	}
	raw, err := w.m.readRawInode(ino)
	if err != nil {
		return fspath.PathError("remove", name, err)
	}
	if ino < w.a.firstIno() {
		return fspath.PathError("remove", name, fmt.Errorf("%w: inode %d is reserved", fs.ErrPermission, ino))
	}
	if rawMode(raw)&sIFMT == sIFDIR {
		cd, err := w.openDir(ino)
		if err != nil {
			return fspath.PathError("remove", name, err)
		}
		empty, err := w.isEmptyDir(cd)
		if err == nil && !empty {
			err = ErrNotEmpty
		}
		if err != nil {
			return fspath.PathError("remove", name, err)
		}
	}
	return w.done("remove", name, w.unlink(d, base, ino, raw))
}

// unlink removes the entry base (inode ino) from d and drops the link.
func (w *Writer) unlink(d *dirHandle, base string, ino uint32, raw []byte) error {
	if err := w.removeEntry(d, base); err != nil {
		return err
	}
	if err := w.dropLink(d, ino, raw); err != nil {
		return err
	}
	return w.touchDir(d)
}

// dropLink takes one name away from inode ino, whose entry in d is gone:
// a directory is released (and d loses its ".." link), a file when it was
// its last name. d's record is written by the caller.
func (w *Writer) dropLink(d *dirHandle, ino uint32, raw []byte) error {
	if rawMode(raw)&sIFMT == sIFDIR {
		w.addDirLink(d.raw, -1)
		return w.releaseInode(ino, raw)
	}
	if n := rawLinks(raw); n > 1 {
		setRawLinks(raw, n-1)
		setTime(raw, 0xC, 0x84, w.opTime)
		return w.writeInode(ino, raw)
	}
	return w.releaseInode(ino, raw)
}

// dotDot is the parent a directory's ".." names.
func (w *Writer) dotDot(ino uint32) (uint32, error) {
	d, err := w.openDir(ino)
	if err != nil {
		return 0, err
	}
	blk := d.fm.physOf(0)
	b := make([]byte, w.blockSize)
	if err := w.readBlock(b, blk); err != nil {
		return 0, err
	}
	dot := int(binary.LittleEndian.Uint16(b[4:]))
	if dot+8 > len(b) {
		return 0, fmt.Errorf("%w: directory inode %d: no '..'", ErrCorrupt, ino)
	}
	return binary.LittleEndian.Uint32(b[dot:]), nil
}

// Rename moves oldpath to newpath, replacing a file there (or an empty
// directory, when oldpath is a directory). A directory moved to another
// parent gets its ".." changed and both parents' link counts.
func (w *Writer) Rename(oldpath, newpath string) error {
	w.lock()
	defer w.mu.Unlock()
	od, obase, err := w.parentOf("rename", oldpath)
	if err != nil {
		return err
	}
	nd, nbase, err := w.parentOf("rename", newpath)
	if err != nil {
		return err
	}
	if nd.ino == od.ino {
		nd = od // one handle, so both changes land in the same record
	}
	src, err := w.child(od, obase)
	if err == nil && src == 0 {
		err = errNotExist
	}
	if err != nil {
		return fspath.PathError("rename", oldpath, err)
	}
	if src < w.a.firstIno() {
		return fspath.PathError("rename", oldpath, fmt.Errorf("%w: inode %d is reserved", fs.ErrPermission, src))
	}
	sraw, err := w.m.readRawInode(src)
	if err != nil {
		return fspath.PathError("rename", oldpath, err)
	}
	srcDir := rawMode(sraw)&sIFMT == sIFDIR
	if srcDir && nd.ino != od.ino {
		// Not into itself: walk up from the new parent.
		for p, n := nd.ino, 0; p != rootIno; n++ {
			if p == src || n > int(w.inodesCount) {
				return fspath.PathError("rename", newpath, fmt.Errorf("%w: a directory cannot move into itself", fs.ErrInvalid))
			}
			if p, err = w.dotDot(p); err != nil {
				return fspath.PathError("rename", newpath, err)
			}
		}
	}
	dst, err := w.child(nd, nbase)
	if err != nil {
		return fspath.PathError("rename", newpath, err)
	}
	if dst == src {
		return nil
	}
	var draw []byte
	if dst != 0 {
		if dst < w.a.firstIno() {
			return fspath.PathError("rename", newpath, fmt.Errorf("%w: inode %d is reserved", fs.ErrPermission, dst))
		}
		if draw, err = w.m.readRawInode(dst); err != nil {
			return fspath.PathError("rename", newpath, err)
		}
		dstDir := rawMode(draw)&sIFMT == sIFDIR
		switch {
		case dstDir && !srcDir:
			return fspath.PathError("rename", newpath, fspath.ErrIsDir)
		case !dstDir && srcDir:
			return fspath.PathError("rename", newpath, errNotDir)
		case dstDir:
			dd, err := w.openDir(dst)
			if err != nil {
				return fspath.PathError("rename", newpath, err)
			}
			empty, err := w.isEmptyDir(dd)
			if err == nil && !empty {
				err = ErrNotEmpty
			}
			if err != nil {
				return fspath.PathError("rename", newpath, err)
			}
		}
	}
	return w.done("rename", newpath, w.rename(od, obase, nd, nbase, src, sraw, dst, draw))
}

func (w *Writer) rename(od *dirHandle, obase string, nd *dirHandle, nbase string, src uint32, sraw []byte, dst uint32, draw []byte) error {
	ft := ftypeOf(rawMode(sraw))
	if dst != 0 {
		if err := w.setEntryIno(nd, nbase, src, ft); err != nil {
			return err
		}
		if err := w.dropLink(nd, dst, draw); err != nil {
			return err
		}
	} else if err := w.addEntry(nd, nbase, src, ft); err != nil {
		return err
	}
	if err := w.removeEntry(od, obase); err != nil {
		return err
	}
	if rawMode(sraw)&sIFMT == sIFDIR && od.ino != nd.ino {
		sd, err := w.openDir(src)
		if err != nil {
			return err
		}
		if err := w.setDotDot(sd, nd.ino); err != nil {
			return err
		}
		w.addDirLink(od.raw, -1)
		w.addDirLink(nd.raw, 1)
		sraw = sd.raw
	}
	setTime(sraw, 0xC, 0x84, w.opTime)
	if err := w.writeInode(src, sraw); err != nil {
		return err
	}
	if err := w.touchDir(od); err != nil {
		return err
	}
	if nd != od {
		return w.touchDir(nd)
	}
	return nil
}

// changeInode applies fn to the record of name (following a symbolic link
// at its end when follow is set), sets its ctime and writes it.
func (w *Writer) changeInode(op, name string, follow bool, fn func(raw []byte)) error {
	w.lock()
	defer w.mu.Unlock()
	in, err := w.lookup(op, name, follow)
	if err != nil {
		return err
	}
	raw, err := w.m.readRawInode(in.ino)
	if err != nil {
		return fspath.PathError(op, name, err)
	}
	fn(raw)
	setTime(raw, 0xC, 0x84, w.opTime)
	return w.done(op, name, w.writeInode(in.ino, raw))
}

// Chtimes sets the access and modification times of name.
func (w *Writer) Chtimes(name string, atime, mtime time.Time) error {
	return w.changeInode("chtimes", name, true, func(raw []byte) {
		if !atime.IsZero() {
			setTime(raw, 0x8, 0x8C, atime)
		}
		if !mtime.IsZero() {
			setTime(raw, 0x10, 0x88, mtime)
		}
	})
}

// Chmod sets the permission bits (and setuid, setgid, sticky) of name.
func (w *Writer) Chmod(name string, mode fs.FileMode) error {
	return w.changeInode("chmod", name, true, func(raw []byte) {
		m := uint16(mode.Perm())
		if mode&fs.ModeSetuid != 0 {
			m |= 0o4000
		}
		if mode&fs.ModeSetgid != 0 {
			m |= 0o2000
		}
		if mode&fs.ModeSticky != 0 {
			m |= 0o1000
		}
		binary.LittleEndian.PutUint16(raw, rawMode(raw)&sIFMT|m)
	})
}

// Lchown sets the owner of name (a symbolic link itself, not its target).
func (w *Writer) Lchown(name string, uid, gid uint32) error {
	return w.changeInode("chown", name, false, func(raw []byte) {
		le := binary.LittleEndian
		le.PutUint16(raw[2:], uint16(uid))
		le.PutUint16(raw[0x78:], uint16(uid>>16))
		le.PutUint16(raw[0x18:], uint16(gid))
		le.PutUint16(raw[0x7A:], uint16(gid>>16))
	})
}

// Symlink makes name a symbolic link to target: kept in the inode when
// shorter than 60 bytes (a fast link), in a data block otherwise.
func (w *Writer) Symlink(target, name string) error {
	w.lock()
	defer w.mu.Unlock()
	if len(target) == 0 || len(target) >= int(w.blockSize) {
		return fspath.PathError("symlink", name, fmt.Errorf("%w: target of %d bytes", fs.ErrInvalid, len(target)))
	}
	d, base, err := w.parentOf("symlink", name)
	if err != nil {
		return err
	}
	if ino, err := w.child(d, base); err != nil || ino != 0 {
		if err == nil {
			err = fs.ErrExist
		}
		return fspath.PathError("symlink", name, err)
	}
	raw := w.newInode(sIFLNK|0o777, 0, 0, 1)
	setRawSize(raw, int64(len(target)))
	if len(target) < 60 {
		copy(raw[0x28:], target)
		_, err := w.newChild(d, base, raw)
		if err == nil {
			err = w.touchDir(d)
		}
		return w.done("symlink", name, err)
	}
	if w.incompat&incompatExtents != 0 {
		setRawFlags(raw, flagExtents)
		initExtentRoot(raw[0x28 : 0x28+60])
	}
	if w.a.usable() < 2 && w.a.totalFreeB >= 2 {
		if err := w.commit(); err != nil {
			return fspath.PathError("symlink", name, err)
		}
	}
	if w.a.usable() < 2 {
		return fspath.PathError("symlink", name, ErrNoSpace)
	}
	ino, err := w.newChild(d, base, raw)
	if err == nil {
		fm := &fileMap{}
		b := make([]byte, w.blockSize)
		copy(b, target)
		if err = w.writeData(ino, raw, fm, b, 0); err == nil {
			setRawSize(raw, int64(len(target)))
			err = w.writeInode(ino, raw)
		}
	}
	if err == nil {
		err = w.touchDir(d)
	}
	return w.done("symlink", name, err)
}

// Link gives the file oldname the second name newname (a hard link).
func (w *Writer) Link(oldname, newname string) error {
	w.lock()
	defer w.mu.Unlock()
	in, err := w.lookup("link", oldname, false)
	if err != nil {
		return err
	}
	if in.isDir() {
		return fspath.PathError("link", oldname, fmt.Errorf("%w: hard link to a directory", fs.ErrPermission))
	}
	d, base, err := w.parentOf("link", newname)
	if err != nil {
		return err
	}
	if ino, err := w.child(d, base); err != nil || ino != 0 {
		if err == nil {
			err = fs.ErrExist
		}
		return fspath.PathError("link", newname, err)
	}
	raw, err := w.m.readRawInode(in.ino)
	if err != nil {
		return fspath.PathError("link", oldname, err)
	}
	if rawLinks(raw) >= 65000 {
		return fspath.PathError("link", newname, fmt.Errorf("too many links"))
	}
	if err := w.addEntry(d, base, in.ino, ftypeOf(rawMode(raw))); err != nil {
		return w.done("link", newname, err)
	}
	setRawLinks(raw, rawLinks(raw)+1)
	setTime(raw, 0xC, 0x84, w.opTime)
	err = w.writeInode(in.ino, raw)
	if err == nil {
		err = w.touchDir(d)
	}
	return w.done("link", newname, err)
}
