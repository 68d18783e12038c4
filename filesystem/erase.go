package filesystem

// EraseSignatures leaves no filesystem recognisable in v: the first and
// the last MiB of the data area are zeroed, where every filesystem
// fsprobe recognises keeps its signature (boot sector, superblock, backup
// boot sector). The signature sector goes first, flushed: a power cut in
// the larger writes then cannot leave the old filesystem recognised with
// its tables zeroed.
func EraseSignatures(v FormatTarget) error {
	if err := DropSignature(v); err != nil {
		return err
	}
	zero := make([]byte, min(v.Size(), 1<<20))
	if _, err := v.WriteAt(zero, 0); err != nil {
		return err
	}
	if _, err := v.WriteAt(zero, v.Size()-int64(len(zero))); err != nil {
		return err
	}
	return v.Sync()
}
