// Package reencrypt rewrites a volume's data area in place under a new
// master key and/or cipher (Start, Resume, Run), or turns a plain image
// into a volume (StartEncrypt), so that a crash, a kill or a power cut at
// any instant loses no sector and the next run completes the work.
//
// The engine here knows no format. A format driver describes the
// re-encryption (volume.ReencryptPlan: where the data lies, how it is
// encrypted before and after, how far it got, how the chunk being
// rewritten is protected) and commits the engine's progress to the
// volume's own metadata (volume.Reencryption); the engine only reads,
// transforms and writes chunks:
//
//  1. read the chunk under the old key (or as plain data);
//  2. have the driver record it as hot, with its protection, durably:
//     checksums of its blocks as they were (ResilienceChecksum), a copy of
//     it (ResilienceJournal), or nothing when the data moves by at least a
//     chunk and the old copy survives (ResilienceDataShift);
//  3. decrypt and encrypt it on all cores, write it, sync;
//  4. record it as done (with checksums, the next chunk's hot record says
//     so, saving a commit per chunk, and the last one's is replaced by
//     Finish).
//
// Steps 1 to 3's reading, hashing and transforming of the next chunk go
// on while the current one is committed, written and synced (pipeline.go;
// what reaches the disk, and in which order, is as above), and the
// default chunks grow from 4 MiB so that the disk's work starts early.
//
// After a crash Run first completes the hot chunk: with checksums, a block
// whose checksum still matches is old and is rewritten, any other is new;
// with a journal, the copy is rewritten whole. Cancelling Run's context
// stops it after the current chunk, progress committed (*Interrupted).
//
// Where the state is kept is the drivers' design, documented beside them:
// volume/tcrypt/reencrypt.go (the header areas' free room: a transition
// header that VeraCrypt and TrueCrypt refuse, the old header's copy and an
// encrypted journal) and volume/luks/reencrypt.go (LUKS2's own
// online-reencrypt-v2 metadata as cryptsetup writes it, so each tool
// resumes the other's; LUKS1 goes through LUKS2 and back).
package reencrypt
