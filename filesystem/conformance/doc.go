// Package conformance is the one test suite every filesystem behind
// package filesystem, and every front end that serves one, must pass: a
// new implementation is done when it does.
//
//   - TestReads runs testing/fstest.TestFS on a filesystem.FS (through
//     IOFS, an io/fs view of it) and compares every file with the
//     expected content; TestReadsIOFS does the same on any io/fs.FS, such
//     as os.DirFS of a mount point.
//   - TestWrites runs the write semantics on a fresh filesystem per case:
//     create, overwrite, WriteAt/append/truncate, rename over a file and
//     of directories, mkdir -p, rm -r, removing a non-empty directory,
//     many files, a full filesystem (errors wrap filesystem.ErrNoSpace,
//     what was there stays), name limits (255 units fit, 256 fail with
//     filesystem.ErrInvalidName), Unicode (NFC and NFD are two names,
//     non-BMP characters), case rules, times at the filesystem's
//     resolution, symbolic links where filesystem.Symlinker is
//     implemented. After each case the filesystem is closed, opened again
//     and compared with a model of what it must hold, then checked by its
//     own filesystem.Checker and by the field's checker (fsck.vfat -n,
//     fsck.exfat -n, e2fsck -fn).
//   - DirWriter presents a mount point as a filesystem.Writer done with
//     os calls, so that TestWrites runs through the kernel and a front
//     end (see mount's TestFilesMountConformance).
//
// The images are made by the real tools (images.go). Where an
// implementation fails a case for a known reason, Target.Skip names the
// case and the issue: the check itself is never loosened.
package conformance
