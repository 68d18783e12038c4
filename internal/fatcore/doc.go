// Package fatcore is what the fat and exfat packages share above their
// on-disk formats: the open File handle over a small Backend, OpenFile and
// the path-level frames of the other operations, the path API written over
// OpenFile (Paths: Open, Create, ReadFile, WriteFile, MkdirAll, the io/fs
// view), the reference counting of open files (Nodes, Ref), the cluster
// run list and its split into device I/O (Chain.Pieces), the common part
// of FileInfo, and path errors. Each package keeps its own boot region,
// allocation (FAT table or bitmap), directory entries, check, repair and
// format; only logic that is the same for both lives here, so a fix to it
// reaches both.
package fatcore
