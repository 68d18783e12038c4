package archive

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
)

// Footer layout (SPEC.md "Footer"): 128 bytes closing every commit.
const (
	footerSize  = 128
	footerMagic = "CVA1FOOT"
	footerMACAt = 96
)

// footer is one commit's fixed-size trailer. It names the index segment
// just before it, the previous commit (for verify's walk over every byte)
// and the previous index run (for Open's walk over the live index).
type footer struct {
	gen        uint64   // commit number, 1 for the commit Create or Compact writes
	prevCommit int64    // offset of commit gen-1's footer, 0 if gen == 1
	prevRun    int64    // offset of the footer of the next older run, 0 if this run is the base
	firstGen   uint64   // first commit this run covers (1 for a base)
	segOff     int64    // offset of this commit's index segment
	segLen     int64    // plaintext length of the segment
	segNonce   [16]byte // stream nonce of the segment
	live       uint64   // members in the archive after this commit
}

// isBase reports whether the segment is a full index, with no older run.
func (f *footer) isBase() bool { return f.prevRun == 0 }

func footerMAC(k *keys, fileID *[16]byte, at int64, body []byte) []byte {
	m := hmac.New(sha256.New, k.footer[:])
	m.Write(fileID[:])
	var off [8]byte
	binary.BigEndian.PutUint64(off[:], uint64(at))
	m.Write(off[:])
	m.Write(body[:footerMACAt])
	return m.Sum(nil)
}

// marshal encodes the footer that will sit at offset at.
func (f *footer) marshal(k *keys, fileID *[16]byte, at int64) []byte {
	b := make([]byte, footerSize)
	copy(b, footerMagic)
	be := binary.BigEndian
	be.PutUint64(b[8:], f.gen)
	be.PutUint64(b[16:], uint64(f.prevCommit))
	be.PutUint64(b[24:], uint64(f.prevRun))
	be.PutUint64(b[32:], f.firstGen)
	be.PutUint64(b[40:], uint64(f.segOff))
	be.PutUint64(b[48:], uint64(f.segLen))
	copy(b[56:72], f.segNonce[:])
	be.PutUint64(b[72:], f.live)
	copy(b[footerMACAt:], footerMAC(k, fileID, at, b))
	return b
}

// parseFooter authenticates and decodes the footer bytes b found at offset
// at, and checks that its pointers are possible. It reports false for
// anything else: a torn write, random data, a footer moved from elsewhere.
func parseFooter(b []byte, k *keys, fileID *[16]byte, at int64) (footer, bool) {
	if len(b) < footerSize || string(b[:8]) != footerMagic {
		return footer{}, false
	}
	if !hmac.Equal(footerMAC(k, fileID, at, b), b[footerMACAt:footerSize]) {
		return footer{}, false
	}
	f := decodeFooter(b)
	return f, f.plausible(at)
}

// decodeFooter reads the fields of footer bytes b (at least looseFooterLen
// of them; missing ones read as zero).
func decodeFooter(b []byte) footer {
	var full [footerSize]byte
	copy(full[:], b)
	b = full[:]
	be := binary.BigEndian
	var f footer
	f.gen = be.Uint64(b[8:])
	f.prevCommit = int64(be.Uint64(b[16:]))
	f.prevRun = int64(be.Uint64(b[24:]))
	f.firstGen = be.Uint64(b[32:])
	f.segOff = int64(be.Uint64(b[40:]))
	f.segLen = int64(be.Uint64(b[48:]))
	copy(f.segNonce[:], b[56:72])
	f.live = be.Uint64(b[72:])
	return f
}

// plausible checks the footer's pointers for one at offset at.
func (f *footer) plausible(at int64) bool {
	return f.gen >= 1 && f.firstGen >= 1 && f.firstGen <= f.gen &&
		f.segOff >= headerSize && f.segLen >= 0 && f.segLen < maxStreamPlain &&
		f.segOff+StreamLen(f.segLen) == at &&
		(f.gen == 1) == (f.prevCommit == 0) &&
		(f.prevCommit == 0 || (f.prevCommit >= headerSize && f.prevCommit+footerSize <= f.segOff)) &&
		(f.firstGen == 1) == (f.prevRun == 0) &&
		(f.prevRun == 0 || (f.prevRun >= headerSize && f.prevRun <= f.prevCommit))
}

// looseFooterLen is how much of a footer salvage needs: every field up to
// and including the segment's nonce.
const looseFooterLen = 72
