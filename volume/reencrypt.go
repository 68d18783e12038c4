package volume

import (
	"context"
	"fmt"

	"github.com/cryptvol/cryptvol/sector"
)

// ErrReencrypting is the error of an ordinary open of a volume whose data
// area is half re-encrypted (a re-encryption was interrupted): part of it
// is under the old key, part under the new one, so no single key shows its
// contents. Package volume/reencrypt resumes and completes it. It wraps
// ErrUnsupported.
var ErrReencrypting = fmt.Errorf("%w: a re-encryption of this volume was interrupted; it must be completed first (cryptvol reencrypt VOLUME)", ErrUnsupported)

// Re-encryption is driven by package volume/reencrypt over what the format
// drivers hand it, which is described here so that the drivers need not
// know the engine: a ReencryptPlan says where the data area is and how it
// is encrypted before and after, a Reencryption records the progress in
// the format's own metadata.

// Resilience names how a re-encryption survives a crash inside the chunk
// it is rewriting (the hot zone), in LUKS2's words.
type Resilience string

const (
	// ResilienceChecksum stores a checksum of every block of the hot zone
	// as it was before; after a crash a block whose checksum still matches
	// is old and is re-encrypted again, any other already new. It needs
	// writes that land whole blocks (a sector or a page), as disks and the
	// page cache do.
	ResilienceChecksum Resilience = "checksum"
	// ResilienceJournal copies the hot zone as it was (ciphertext) before
	// rewriting it; after a crash the copy is rewritten whole.
	ResilienceJournal Resilience = "journal"
	// ResilienceDataShift moves the data while it is re-encrypted, by at
	// least a chunk, so the old copy of the hot zone is never overwritten
	// before the chunk is recorded as done.
	ResilienceDataShift Resilience = "datashift"
)

// ReencryptSide is one encryption of the data area: before or after.
type ReencryptSide struct {
	// Mode encrypts the data; nil means none (plain data, for --encrypt).
	Mode sector.Mode
	// SectorSize is the mode's IV unit in bytes.
	SectorSize int
	// Offset is where byte 0 of the data area lies on the device.
	Offset int64
	// FirstSector is the IV (tweak) of the data area's first sector.
	FirstSector uint64
}

// ReencryptHot is the chunk a re-encryption was rewriting when it stopped,
// as its metadata recorded it before the first byte of it was written.
type ReencryptHot struct {
	// Offset and Length locate the chunk in the data area.
	Offset, Length int64
	// Protection is what the resilience mode kept of it: the block
	// checksums (checksum), the chunk's old ciphertext (journal) or
	// nothing (datashift: the old copy is where the old side says).
	Protection []byte
}

// ReencryptPlan is a re-encryption as the format recorded it.
type ReencryptPlan struct {
	// Format names the volume's format ("luks2", "veracrypt", ...) for
	// messages; Encrypt is set when the data was plain (--encrypt).
	Format  string
	Encrypt bool
	// Size is the length of the data area in bytes.
	Size     int64
	Old, New ReencryptSide
	// Backward re-encrypts from the end to the start (with a data shift
	// the data moves up and must be copied from its end first).
	Backward bool
	// Done is how much is re-encrypted: forward, bytes [0, Done) of the
	// data area; backward, [Done, Size).
	Done int64
	// Hot is set when the last run stopped inside a chunk.
	Hot *ReencryptHot
	// Resilience, with for checksums the hash (a name hashes.Lookup
	// knows), the block it covers and how many bytes of each digest are
	// kept.
	Resilience Resilience
	Hash       string
	BlockSize  int
	SumSize    int
	// MaxChunk bounds a chunk (the resilience metadata must hold it);
	// Align is what chunk boundaries must be a multiple of.
	MaxChunk int64
	Align    int64
}

// Completed is how many bytes are re-encrypted, whichever way the run
// goes.
func (p *ReencryptPlan) Completed() int64 {
	if p.Backward {
		return p.Size - p.Done
	}
	return p.Done
}

// Reencryption is a format driver's side of a re-encryption in progress:
// it commits the engine's progress to the volume's metadata, each call
// durable (synced) when it returns.
type Reencryption interface {
	// Plan describes the re-encryption as it stands.
	Plan() *ReencryptPlan
	// Device is where the data area lies.
	Device() Device
	// CommitHot records that the chunk [off, off+n) is about to be
	// rewritten, with its protection (see ReencryptHot). Everything
	// before it (forward; after it, backward) is done, which the engine
	// made durable first.
	CommitHot(ctx context.Context, off, n int64, protection []byte) error
	// CommitDone records the progress (ReencryptPlan.Done).
	CommitDone(ctx context.Context, done int64) error
	// Finish turns the volume into an ordinary one under the new key,
	// once all of it is re-encrypted.
	Finish(ctx context.Context) error
	// Close wipes the keys.
	Close() error
}
