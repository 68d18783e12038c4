package argon2

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// ErrInsufficientMemory is returned (wrapped, with the figures) when an
// Argon2 derivation asks for more memory than the machine can give. Key
// returns it before allocating, so an oversized request fails cleanly
// instead of the process being killed by the out-of-memory killer.
var ErrInsufficientMemory = errors.New("argon2: not enough memory available")

// headroom is kept free beyond the Argon2 matrix itself for the rest of
// the process.
const headroom = 64 << 20

// maxAddressable is the largest matrix allowed by the address space: on
// 32-bit platforms a contiguous allocation beyond about 1 GiB is likely to
// fail with a fatal, unrecoverable runtime error.
const maxAddressable = uint64(1) << (30 + (bits.UintSize/64)*10) // 1 GiB on 32-bit, 1 TiB on 64-bit

// availableMemory reports how many bytes the process can allocate and how
// that figure was obtained; a variable so tests can simulate a small
// machine.
var availableMemory = systemAvailableMemory

// reserved counts the matrices of derivations in flight in this process:
// the kernel's figure lags behind them (pages count only once touched), so
// two concurrent derivations must not both be granted the same memory.
var (
	reservedMu sync.Mutex
	reserved   uint64
)

// reserveMemory grants need bytes for a matrix, or returns an error
// wrapping ErrInsufficientMemory. The caller calls release when done.
func reserveMemory(need uint64) (release func(), err error) {
	if need > maxAddressable {
		return nil, fmt.Errorf("%w: %d MiB requested, %d MiB is the limit of a %d-bit address space",
			ErrInsufficientMemory, need>>20, maxAddressable>>20, bits.UintSize)
	}
	avail, source := availableMemory()
	reservedMu.Lock()
	defer reservedMu.Unlock()
	if need+reserved+headroom > avail {
		busy := ""
		if reserved > 0 {
			busy = fmt.Sprintf(", %d MiB of it held by other Argon2 derivations", reserved>>20)
		}
		return nil, fmt.Errorf("%w: %d MiB requested (plus %d MiB headroom), %d MiB available (%s%s)",
			ErrInsufficientMemory, need>>20, headroom>>20, avail>>20, source, busy)
	}
	reserved += need
	return func() {
		reservedMu.Lock()
		reserved -= need
		reservedMu.Unlock()
	}, nil
}
