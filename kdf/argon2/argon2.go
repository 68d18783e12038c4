// Package argon2 implements the Argon2 memory-hard function of RFC 9106
// (version 0x13) in its three variants, with the optional secret K and
// associated data X, any tag length (VeraCrypt derives a 192-byte header
// key), lanes filled concurrently, a context to cancel a derivation that is
// no longer needed, and a check of the requested memory against what the
// machine can give before anything is allocated.
package argon2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// Mode selects the Argon2 variant; the values are the type field y of
// RFC 9106 section 3.2.
type Mode uint32

// The three variants.
const (
	Argon2d  Mode = 0
	Argon2i  Mode = 1
	Argon2id Mode = 2
)

// String returns the variant name, e.g. "Argon2id".
func (m Mode) String() string {
	switch m {
	case Argon2d:
		return "Argon2d"
	case Argon2i:
		return "Argon2i"
	case Argon2id:
		return "Argon2id"
	}
	return fmt.Sprintf("Argon2(%d)", uint32(m))
}

// Version is the only version implemented, 0x13 (1.3).
const Version = 0x13

const (
	blockWords = 128 // 1 KiB blocks of 64-bit words
	syncPoints = 4   // slices per pass

	// returnToOSThreshold is the matrix size from which Key returns the
	// memory to the operating system as soon as it is done.
	returnToOSThreshold = 256 << 20
)

type block [blockWords]uint64

// Params are the Argon2 inputs other than password and salt.
type Params struct {
	Mode        Mode
	Passes      uint32 // t, at least 1
	MemoryKiB   uint32 // m, at least 8 per lane
	Parallelism uint32 // p, lanes, 1 to 2^24-1
	Secret      []byte // K, optional
	Associated  []byte // X, optional
}

// ErrInvalidParams is wrapped by errors about parameters outside RFC 9106's
// ranges.
var ErrInvalidParams = errors.New("argon2: invalid parameters")

func (p *Params) validate(saltLen int, tagLen uint32) error {
	switch {
	case p.Mode > Argon2id:
		return fmt.Errorf("%w: unknown mode %d", ErrInvalidParams, p.Mode)
	case p.Parallelism < 1 || p.Parallelism > 1<<24-1:
		return fmt.Errorf("%w: parallelism %d outside 1..2^24-1", ErrInvalidParams, p.Parallelism)
	case p.Passes < 1:
		return fmt.Errorf("%w: %d passes", ErrInvalidParams, p.Passes)
	case uint64(p.MemoryKiB) < 8*uint64(p.Parallelism):
		return fmt.Errorf("%w: memory %d KiB below 8 KiB per lane", ErrInvalidParams, p.MemoryKiB)
	case saltLen < 8:
		return fmt.Errorf("%w: salt of %d bytes, RFC 9106 requires 8 or more", ErrInvalidParams, saltLen)
	case tagLen < 4:
		return fmt.Errorf("%w: tag of %d bytes, RFC 9106 requires 4 or more", ErrInvalidParams, tagLen)
	}
	return nil
}

// Key derives tagLen bytes from password and salt. It returns an error
// wrapping ErrInsufficientMemory, without allocating, when the machine
// cannot give the requested memory, and ctx.Err() if ctx ends first.
func Key(ctx context.Context, p Params, password, salt []byte, tagLen uint32) ([]byte, error) {
	if err := p.validate(len(salt), tagLen); err != nil {
		return nil, err
	}
	lanes := p.Parallelism
	// m' = 4p * floor(m / 4p) blocks.
	segLen := p.MemoryKiB / (syncPoints * lanes)
	laneLen := segLen * syncPoints
	total := uint64(laneLen) * uint64(lanes)
	release, err := reserveMemory(total * 1024)
	if err != nil {
		return nil, err
	}
	defer release()
	h0 := initialHash(&p, password, salt, tagLen)
	defer clear(h0[:])

	mem := make([]block, total)
	adviseHugePages(mem)
	var inst *instance
	defer func() {
		// Wipe the matrix (it is derived from the password) and, for
		// large ones, hand the pages back to the system right away so
		// the next derivation's memory check sees them free again.
		clear(mem)
		mem, inst = nil, nil
		if total*1024 >= returnToOSThreshold {
			debug.FreeOSMemory()
		}
	}()
	inst = &instance{
		mem: mem, mode: p.Mode, passes: p.Passes, lanes: lanes,
		laneLen: laneLen, segLen: segLen, memBlocks: uint32(total),
	}
	inst.firstBlocks(&h0)
	if err := inst.fill(ctx); err != nil {
		return nil, err
	}
	var final block
	final = mem[laneLen-1]
	for l := uint32(1); l < lanes; l++ {
		last := &mem[l*laneLen+laneLen-1]
		for i := range final {
			final[i] ^= last[i]
		}
	}
	var fb [1024]byte
	for i, v := range final {
		binary.LittleEndian.PutUint64(fb[8*i:], v)
	}
	tag := variableHash(tagLen, fb[:])
	clear(fb[:])
	clear(final[:])
	return tag, nil
}

// initialHash computes H0 (RFC 9106 section 3.2 step 1).
func initialHash(p *Params, password, salt []byte, tagLen uint32) [64]byte {
	var le [4]byte
	u32 := func(v uint32) []byte { binary.LittleEndian.PutUint32(le[:], v); return le[:] }
	h := newBlake2b(64)
	h.Write(u32(p.Parallelism))
	h.Write(u32(tagLen))
	h.Write(u32(p.MemoryKiB))
	h.Write(u32(p.Passes))
	h.Write(u32(Version))
	h.Write(u32(uint32(p.Mode)))
	for _, b := range [][]byte{password, salt, p.Secret, p.Associated} {
		h.Write(u32(uint32(len(b))))
		h.Write(b)
	}
	var out [64]byte
	h.Sum(out[:0])
	return out
}

type instance struct {
	mem       []block
	mode      Mode
	passes    uint32
	lanes     uint32
	laneLen   uint32
	segLen    uint32
	memBlocks uint32
}

// firstBlocks sets B[i][0] and B[i][1] = H'^1024(H0 || j || i).
func (a *instance) firstBlocks(h0 *[64]byte) {
	var in [72]byte
	copy(in[:], h0[:])
	for l := uint32(0); l < a.lanes; l++ {
		for j := uint32(0); j < 2; j++ {
			binary.LittleEndian.PutUint32(in[64:], j)
			binary.LittleEndian.PutUint32(in[68:], l)
			out := variableHash(1024, in[:])
			b := &a.mem[l*a.laneLen+j]
			for i := range b {
				b[i] = binary.LittleEndian.Uint64(out[8*i:])
			}
			clear(out)
		}
	}
	clear(in[:])
}

// fill runs every pass; within a slice the lanes are independent and run
// on their own goroutines, with a barrier between slices.
func (a *instance) fill(ctx context.Context) error {
	done := ctx.Done()
	var stop cancelFlag
	if done != nil {
		finished := make(chan struct{})
		defer close(finished)
		go func() {
			select {
			case <-done:
				stop.set()
			case <-finished:
			}
		}()
	}
	for pass := uint32(0); pass < a.passes; pass++ {
		for slice := uint32(0); slice < syncPoints; slice++ {
			if a.lanes == 1 {
				a.fillSegment(pass, slice, 0, &stop)
			} else {
				var wg sync.WaitGroup
				for lane := uint32(0); lane < a.lanes; lane++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						a.fillSegment(pass, slice, lane, &stop)
					}()
				}
				wg.Wait()
			}
			if stop.isSet() {
				return ctx.Err()
			}
		}
	}
	return nil
}

// fillSegment computes one segment (RFC 9106 sections 3.3 and 3.4).
func (a *instance) fillSegment(pass, slice, lane uint32, stop *cancelFlag) {
	var address, input, zero block
	independent := a.mode == Argon2i || (a.mode == Argon2id && pass == 0 && slice < syncPoints/2)
	if independent {
		input[0] = uint64(pass)
		input[1] = uint64(lane)
		input[2] = uint64(slice)
		input[3] = uint64(a.memBlocks)
		input[4] = uint64(a.passes)
		input[5] = uint64(a.mode)
	}
	start := uint32(0)
	if pass == 0 && slice == 0 {
		start = 2
		if independent {
			nextAddresses(&address, &input, &zero)
		}
	}
	offset := lane*a.laneLen + slice*a.segLen + start
	prev := offset - 1
	if offset%a.laneLen == 0 {
		prev = offset + a.laneLen - 1
	}
	for index := start; index < a.segLen; index, offset, prev = index+1, offset+1, prev+1 {
		if index&1023 == 0 && stop.isSet() {
			return
		}
		if offset%a.laneLen == 1 {
			prev = offset - 1
		}
		var rand uint64
		if independent {
			if index%blockWords == 0 {
				nextAddresses(&address, &input, &zero)
			}
			rand = address[index%blockWords]
		} else {
			rand = a.mem[prev][0]
		}
		refLane := uint32(rand>>32) % a.lanes
		if pass == 0 && slice == 0 {
			refLane = lane
		}
		refIndex := a.indexAlpha(pass, slice, index, uint32(rand), refLane == lane)
		ref := &a.mem[refLane*a.laneLen+refIndex]
		processBlock(&a.mem[offset], &a.mem[prev], ref, pass != 0)
	}
}

// indexAlpha maps the pseudo-random J1 to a block of the reference set
// (RFC 9106 section 3.4.2).
func (a *instance) indexAlpha(pass, slice, index, j1 uint32, sameLane bool) uint32 {
	var area uint32
	if pass == 0 {
		switch {
		case slice == 0:
			area = index - 1
		case sameLane:
			area = slice*a.segLen + index - 1
		case index == 0:
			area = slice*a.segLen - 1
		default:
			area = slice * a.segLen
		}
	} else {
		switch {
		case sameLane:
			area = a.laneLen - a.segLen + index - 1
		case index == 0:
			area = a.laneLen - a.segLen - 1
		default:
			area = a.laneLen - a.segLen
		}
	}
	x := uint64(j1) * uint64(j1) >> 32
	rel := uint64(area) - 1 - (uint64(area) * x >> 32)
	var startPos uint32
	if pass != 0 && slice != syncPoints-1 {
		startPos = (slice + 1) * a.segLen
	}
	return uint32((uint64(startPos) + rel) % uint64(a.laneLen))
}

// nextAddresses produces the next block of Argon2i reference addresses:
// address = G(0, G(0, input)) after incrementing the counter.
func nextAddresses(address, input, zero *block) {
	input[6]++
	processBlock(address, zero, input, false)
	processBlock(address, zero, address, false)
}
