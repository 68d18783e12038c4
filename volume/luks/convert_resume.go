package luks

// Recognising a LUKS1 header that a conversion was interrupted in.
//
// Each keyslot moves on its own under a LUKS1 header that always opens
// the volume (convert_move.go), so a kill leaves a valid LUKS1 header
// whose keyslots are part-way: at their LUKS1 places, at a free place on
// the way, at their LUKS2 places, and the free keyslots wherever there
// was room (up to the data, often). Converting such a header afresh
// would move the keyslots in use another 28 KiB on (each interrupted run
// drifting further, until the conversion back finds no room) or refuse
// it outright, its free keyslots ending too close to the data. A volume
// in cryptsetup's luksFormat layout (keyslot i at 4096 + i*stride) goes
// through layouts that can be worked out: the ones its conversion to
// LUKS2 and its conversion back plan. A header in one of them is taken
// to be that volume, and converted to its LUKS2 places.

// homePlaces is cryptsetup's luksFormat layout: keyslot i's material at
// 4096 + i*stride, stride the material's size rounded up to 4096.
func homePlaces(stride int64) (home [luks1NumKeys]int64) {
	for i := range home {
		home[i] = luks1AlignKeyslots + int64(i)*stride
	}
	return home
}

// resumeTargets returns the LUKS2 places (home + convertShift) of the
// keyslots in use when pos, the keyslots' places in the LUKS1 header on
// disk, is a layout one of the conversions of the volume in the home
// layout goes through; ksEnd is the end of the LUKS2 keyslots area the
// conversion to LUKS2 gives it. ok is false for any other layout.
func (l *luks1Layout) resumeTargets(pos [luks1NumKeys]int64, stride, ksEnd int64) (target map[int]int64, ok bool) {
	home := homePlaces(stride)
	if end := (home[luks1NumKeys-1] + l.n + 4095) &^ 4095; end+convertShift > l.limit {
		return nil, false
	}
	target = map[int]int64{}
	back := map[int]int64{}
	var shifted [luks1NumKeys]int64
	for i := range l.active {
		if l.active[i] {
			target[i] = home[i] + convertShift
			back[i] = home[i]
			shifted[i] = target[i]
		}
	}
	if len(target) == 0 {
		return nil, false
	}
	candidates := [][luks1NumKeys]int64{home}
	// To LUKS2: from the home layout to the LUKS2 places.
	if steps, err := l.planMoves(home, target); err == nil {
		for _, s := range steps {
			candidates = append(candidates, s.pos)
		}
	}
	// Back to LUKS1: the first LUKS1 header points at the LUKS2 places,
	// the free keyslots wherever there is room, then the keyslots move
	// home (luks2ToLUKS1).
	l2 := *l
	l2.limit = ksEnd
	if start, ok := l2.placeFree(shifted, nil); ok {
		candidates = append(candidates, start)
		if steps, err := l2.planMoves(start, back); err == nil {
			for _, s := range steps {
				candidates = append(candidates, s.pos)
			}
		}
	}
	for _, c := range candidates {
		if l.sameInUse(pos, c) {
			return target, true
		}
	}
	return nil, false
}

// sameInUse reports whether a and b put every keyslot in use at the same
// place.
func (l *luks1Layout) sameInUse(a, b [luks1NumKeys]int64) bool {
	for i := range a {
		if l.active[i] && a[i] != b[i] {
			return false
		}
	}
	return true
}
