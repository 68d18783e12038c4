package argon2

import "sync/atomic"

// cancelFlag is polled by the segment loops every 1024 blocks (about a
// millisecond); a goroutine watching the context sets it, so the hot loop
// reads one atomic word instead of a channel.
type cancelFlag struct{ v atomic.Bool }

func (c *cancelFlag) set()        { c.v.Store(true) }
func (c *cancelFlag) isSet() bool { return c.v.Load() }
