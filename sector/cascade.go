package sector

// cascade applies several modes to the same sectors in sequence.
type cascade struct {
	modes      []Mode
	sectorSize int
	chunk      int // bytes per pass, a whole number of sectors
}

// Cascade returns a Mode that encrypts with modes[0] first, then modes[1] on
// its output, and so on; Decrypt undoes them in reverse order. This is how
// VeraCrypt cascades work: each cipher runs XTS with its own keys over the
// whole sector (for "AES-Twofish" pass the Twofish XTS mode first, see
// ciphers.Chain). All modes must have the same sector size; Cascade panics
// otherwise or when given no mode.
//
// Long runs are processed 64 KiB at a time through all the modes, so the
// data stays in cache between the passes.
func Cascade(modes ...Mode) Mode {
	if len(modes) == 0 {
		panic("sector: Cascade of no modes")
	}
	if len(modes) == 1 {
		return modes[0]
	}
	ss := modes[0].SectorSize()
	for _, m := range modes[1:] {
		if m.SectorSize() != ss {
			panic("sector: Cascade of modes with different sector sizes")
		}
	}
	return &cascade{
		modes:      append([]Mode(nil), modes...),
		sectorSize: ss,
		chunk:      sectorsPerChunk(ss) * ss,
	}
}

// SectorSize implements Mode.
func (c *cascade) SectorSize() int { return c.sectorSize }

// Encrypt implements Mode.
func (c *cascade) Encrypt(dst, src []byte, first uint64) {
	checkRun(dst, src, c.sectorSize)
	for len(src) > 0 {
		n := min(len(src), c.chunk)
		d := dst[:n]
		c.modes[0].Encrypt(d, src[:n], first)
		for _, m := range c.modes[1:] {
			m.Encrypt(d, d, first)
		}
		dst, src = dst[n:], src[n:]
		first += uint64(n / c.sectorSize)
	}
}

// Decrypt implements Mode.
func (c *cascade) Decrypt(dst, src []byte, first uint64) {
	checkRun(dst, src, c.sectorSize)
	last := len(c.modes) - 1
	for len(src) > 0 {
		n := min(len(src), c.chunk)
		d := dst[:n]
		c.modes[last].Decrypt(d, src[:n], first)
		for i := last - 1; i >= 0; i-- {
			c.modes[i].Decrypt(d, d, first)
		}
		dst, src = dst[n:], src[n:]
		first += uint64(n / c.sectorSize)
	}
}
