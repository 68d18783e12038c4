// Package fatcore is what the fat and exfat packages share above their
// on-disk formats: the open File handle over a small Backend; OpenFile and
// the path API (Paths: Open, Create, ReadFile, WriteFile, MkdirAll, the
// io/fs view, and Stat, ReadDir, Mkdir, Remove, RemoveAll, Chtimes,
// SetCreateTime, SetAttributes, Rename with their order of checks) over a
// package's Tree; the order of a file's commit, release, truncate and
// removal (Nodes.Commit, Nodes.Release, Truncate, Nodes.Unlink) and the
// reference counting of open files (Nodes, Ref); the cluster run list and
// its split into device I/O (Chain.Pieces); the common part of FileInfo,
// the text of a check report, directory paths and path errors. Each
// package keeps its own boot region, allocation (FAT table or bitmap),
// directory entries, check, repair and format, and answers the Tree's
// questions where FAT and exFAT differ; only logic that is the same for
// both lives here, so a fix to it reaches both.
package fatcore
