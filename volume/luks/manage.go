package luks

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cryptvol/cryptvol/volume"
)

// Keyslot management: cryptsetup's luksAddKey, luksRemoveKey,
// luksKillSlot and luksChangeKey. Every function works on the header
// device (the volume itself, or a detached header).

var (
	// ErrLastKeyslot refuses to remove the only keyslot that opens the
	// data: without it the volume can never be opened again.
	ErrLastKeyslot = errors.New("refusing to remove the last keyslot: nothing could open the volume afterwards")
	// ErrKeyslotInUse refuses to overwrite an active keyslot.
	ErrKeyslotInUse = errors.New("keyslot is in use")
)

// KeyslotOptions configure a new keyslot.
type KeyslotOptions struct {
	// Slot is the number of the new keyslot (cryptsetup's --key-slot for
	// luksAddKey); nil takes the first free one. For ChangeKey, nil keeps
	// the keyslot number where the format allows it.
	Slot *int
	// KDF chooses the new keyslot's key derivation; zero values are
	// cryptsetup's defaults.
	KDF KDFOptions
	// KeyslotCipher is a LUKS2 keyslot's area cipher (--keyslot-cipher);
	// empty means the data cipher.
	KeyslotCipher string
	// Rand is the randomness source; nil means crypto/rand.
	Rand io.Reader
	// Warn receives non-fatal warnings.
	Warn func(string)
}

func (o *KeyslotOptions) warn(msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}

// unlocked is a header opened for editing with the volume key.
type unlocked struct {
	l      *loaded
	dev    volume.Device // the header device, guarded: write through it
	digest string        // LUKS2: the data segment's digest
	key    []byte
	slot   int
}

// watchedDevice is a header device whose first write fails with
// volume.ErrHeaderChanged if the header on disk is no longer the one
// loaded: a program the lock cannot see may have rewritten it while the
// keys were derived. Later writes (the operation's own) are not checked.
type watchedDevice struct {
	volume.Device
	snap    *volume.HeaderSnapshot
	checked bool
}

func (g *watchedDevice) WriteAt(p []byte, off int64) (int, error) {
	if !g.checked {
		testHookBeforeHeaderWrite()
		if err := g.snap.Check(g.Device); err != nil {
			return 0, err
		}
		g.checked = true
	}
	return g.Device.WriteAt(p, off)
}

// testHookBeforeHeaderWrite runs just before a header change checks that
// the header on disk is still the one loaded; tests change it there.
var testHookBeforeHeaderWrite = func() {}

// watch snapshots the header l was loaded from and returns dev guarded.
func watch(dev volume.Device, l *loaded) (volume.Device, error) {
	snap, err := snapshot(dev, l)
	if err != nil {
		return nil, err
	}
	return &watchedDevice{Device: dev, snap: snap}, nil
}

// unlockHeader loads the header and opens a keyslot with the credentials.
func unlockHeader(ctx context.Context, hdr volume.Device, creds volume.Credentials) (*unlocked, error) {
	l, err := load(hdr, "luks")
	if err != nil {
		return nil, err
	}
	g, err := watch(hdr, l)
	if err != nil {
		return nil, err
	}
	pass, err := Passphrase(creds)
	if err != nil {
		return nil, err
	}
	defer clear(pass)
	u := &unlocked{l: l, dev: g}
	var atts []attempt
	if l.v1 != nil {
		if l.v1.specErr != nil {
			return nil, l.v1.specErr
		}
		atts, err = luks1Attempts(hdr, l.v1, pass, creds.KeySlot)
	} else {
		if err := l.v2.requirementError(); err != nil {
			return nil, err
		}
		seg, err := l.v2.dataSegment()
		if err != nil {
			return nil, err
		}
		u.digest = seg.Digest
		atts, err = luks2Attempts(hdr, l.v2, seg.Digest, pass, creds.KeySlot)
		if err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	got, err := runAttempts(ctx, atts, nil)
	if err != nil {
		return nil, err
	}
	u.key, u.slot = got.key, got.slot
	return u, nil
}

// checkWritable refuses to change a LUKS2 header with requirement flags.
func checkWritable(l *loaded) error {
	if l.v2 != nil {
		return l.v2.requirementError()
	}
	return nil
}

// AddKey adds a keyslot for newPass, unlocking the volume key with the
// credentials (cryptsetup luksAddKey). It returns the new keyslot number.
func AddKey(ctx context.Context, hdr volume.Device, creds volume.Credentials, newPass []byte, o KeyslotOptions) (int, error) {
	u, err := unlockHeader(ctx, hdr, creds)
	if err != nil {
		return 0, err
	}
	defer clear(u.key)
	rnd := orRand(o.Rand)
	if u.l.v1 != nil {
		return addLUKS1(ctx, u.dev, u.l.v1, u.key, newPass, o, rnd)
	}
	return addLUKS2(ctx, u.dev, u.l.v2, u.digest, u.key, newPass, o, rnd, "")
}

func freeLUKS1Slot(h *luks1Header, want *int, except int) (int, error) {
	if want != nil {
		if *want < 0 || *want >= luks1NumKeys {
			return 0, volume.InvalidOptionf("keyslot %d out of range 0..7", *want)
		}
		if h.Slots[*want].Active == luks1SlotEnabled && *want != except {
			return 0, fmt.Errorf("%w: keyslot %d", ErrKeyslotInUse, *want)
		}
		return *want, nil
	}
	for i, s := range h.Slots {
		if s.Active != luks1SlotEnabled && i != except {
			return i, nil
		}
	}
	return -1, nil
}

func luks1Iterations(ctx context.Context, h *luks1Header, o KDFOptions) (int, error) {
	o.Hash = h.HashSpec
	r, err := o.resolved(1)
	if err != nil {
		return 0, err
	}
	p, err := r.params(ctx, int(h.KeyBytes))
	if err != nil {
		return 0, err
	}
	return int(p.Iterations), nil
}

func addLUKS1(ctx context.Context, dev volume.Device, h *luks1Header, mk, pass []byte, o KeyslotOptions, rnd io.Reader) (int, error) {
	slot, err := freeLUKS1Slot(h, o.Slot, -1)
	if err != nil {
		return 0, err
	}
	if slot < 0 {
		return 0, fmt.Errorf("%w: all 8 LUKS1 keyslots are in use", ErrKeyslotInUse)
	}
	iters, err := luks1Iterations(ctx, h, o.KDF)
	if err != nil {
		return 0, err
	}
	next := *h
	material, err := sealLUKS1Slot(ctx, &next, slot, mk, pass, iters, rnd)
	if err != nil {
		return 0, err
	}
	defer clear(material)
	off, _ := h.slotMaterial(slot)
	if err := writeKeyMaterial(dev, material, off); err != nil {
		return 0, err
	}
	if err := writeLUKS1Header(dev, &next); err != nil {
		return 0, err
	}
	*h = next
	return slot, nil
}

func freeLUKS2Slot(h *luks2Header, want *int, except string) (string, error) {
	if want != nil {
		if *want < 0 || *want >= 32 {
			return "", volume.InvalidOptionf("keyslot %d out of range 0..31", *want)
		}
		id := fmt.Sprint(*want)
		if _, used := h.meta.doc.Keyslots[id]; used && id != except {
			return "", fmt.Errorf("%w: keyslot %d", ErrKeyslotInUse, *want)
		}
		return id, nil
	}
	for i := 0; i < 32; i++ {
		id := fmt.Sprint(i)
		if _, used := h.meta.doc.Keyslots[id]; !used {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w: all 32 LUKS2 keyslots are in use", ErrKeyslotInUse)
}

// addLUKS2 writes a keyslot for pass; replace names an existing keyslot
// that the new one takes the place (and number) of.
func addLUKS2(ctx context.Context, dev volume.Device, h *luks2Header, digest string, mk, pass []byte, o KeyslotOptions, rnd io.Reader, replace string) (int, error) {
	if err := checkWritable(&loaded{v2: h}); err != nil {
		return 0, err
	}
	id, err := freeLUKS2Slot(h, o.Slot, replace)
	if err != nil {
		return 0, err
	}
	if replace != "" && o.Slot == nil {
		id = replace
	}
	kopt, err := o.KDF.resolved(2)
	if err != nil {
		return 0, err
	}
	p, err := kopt.params(ctx, len(mk))
	if err != nil {
		return 0, err
	}
	seg, err := h.dataSegment()
	if err != nil {
		return 0, err
	}
	// The new key material must not overlap any area the current header
	// uses, including the one it replaces.
	off, err := findArea(h.meta, h.size(), luks2AreaSize(len(mk), luks1Stripes), "")
	if err != nil {
		return 0, err
	}
	spec, err := keyslotSpec(o.KeyslotCipher, seg.Spec, len(mk), 2)
	if err != nil {
		return 0, err
	}
	slot, material, err := newLUKS2Keyslot(ctx, mk, pass, p, spec, kopt.Hash, off, rnd)
	if err != nil {
		return 0, err
	}
	defer clear(material)
	meta, err := editLUKS2(h, func(raw map[string]any) {
		if replace != "" {
			unassignKeyslot(raw, replace)
		}
		object(raw, "keyslots")[id] = slot
		assignKeyslot(raw, digest, id)
	})
	if err != nil {
		return 0, fmt.Errorf("internal error editing LUKS2 metadata: %w", err)
	}
	if err := writeKeyMaterial(dev, material, int64(off)); err != nil {
		return 0, err
	}
	if err := commitLUKS2(dev, h, meta, rnd, false); err != nil {
		return 0, err
	}
	return atoiID(id), nil
}

// activeSlots counts the keyslots that open the data.
func activeSlots(u *unlocked) int {
	n := 0
	if u.l.v1 != nil {
		for _, s := range u.l.v1.Slots {
			if s.Active == luks1SlotEnabled {
				n++
			}
		}
		return n
	}
	for id, k := range u.l.v2.meta.doc.Keyslots {
		if dg, ok := u.l.v2.meta.digestOf(id); ok && dg == u.digest && k.Type == "luks2" {
			n++
		}
	}
	return n
}

// RemoveKey removes the keyslot the credentials open (cryptsetup
// luksRemoveKey) and returns its number. Removing the last keyslot needs
// force.
func RemoveKey(ctx context.Context, hdr volume.Device, creds volume.Credentials, force bool, rnd io.Reader) (int, error) {
	u, err := unlockHeader(ctx, hdr, creds)
	if err != nil {
		return 0, err
	}
	clear(u.key)
	if activeSlots(u) <= 1 && !force {
		return 0, ErrLastKeyslot
	}
	return u.slot, killSlot(u.dev, u.l, u.slot, orRand(rnd))
}

// KillSlot removes keyslot slot (cryptsetup luksKillSlot). When verify is
// not nil its passphrase must open some keyslot first; removing the last
// keyslot needs force.
func KillSlot(ctx context.Context, hdr volume.Device, slot int, verify *volume.Credentials, force bool, rnd io.Reader) error {
	l, err := load(hdr, "luks")
	if err != nil {
		return err
	}
	if err := checkWritable(l); err != nil {
		return err
	}
	g, err := watch(hdr, l)
	if err != nil {
		return err
	}
	u := &unlocked{l: l, dev: g}
	if l.v2 != nil {
		if seg, err := l.v2.dataSegment(); err == nil {
			u.digest = seg.Digest
		}
	}
	if verify != nil {
		v, err := unlockHeader(ctx, hdr, *verify)
		if err != nil {
			return err
		}
		clear(v.key)
	}
	exists := false
	if l.v1 != nil {
		exists = slot >= 0 && slot < luks1NumKeys && l.v1.Slots[slot].Active == luks1SlotEnabled
	} else {
		_, exists = l.v2.meta.doc.Keyslots[fmt.Sprint(slot)]
	}
	if !exists {
		return fmt.Errorf("keyslot %d is not active", slot)
	}
	counted := l.v1 != nil
	if l.v2 != nil {
		dg, ok := l.v2.meta.digestOf(fmt.Sprint(slot))
		counted = ok && dg == u.digest
	}
	if counted && activeSlots(u) <= 1 && !force {
		return ErrLastKeyslot
	}
	return killSlot(g, l, slot, orRand(rnd))
}

// killSlot drops the keyslot from the header, then wipes its key material.
func killSlot(dev volume.Device, l *loaded, slot int, rnd io.Reader) error {
	if err := checkWritable(l); err != nil {
		return err
	}
	if h := l.v1; h != nil {
		next := *h
		off, n := h.slotMaterial(slot)
		next.Slots[slot] = luks1Slot{Active: luks1SlotDisabled, Offset: h.Slots[slot].Offset, Stripes: h.Slots[slot].Stripes}
		if err := writeLUKS1Header(dev, &next); err != nil {
			return err
		}
		*h = next
		return wipeSynced(dev, off, n, rnd)
	}
	h := l.v2
	id := fmt.Sprint(slot)
	areas, err := h.meta.areas()
	if err != nil {
		return err
	}
	a := areas[id]
	meta, err := editLUKS2(h, func(raw map[string]any) { unassignKeyslot(raw, id) })
	if err != nil {
		return err
	}
	if err := commitLUKS2(dev, h, meta, rnd, false); err != nil {
		return err
	}
	return wipeSynced(dev, int64(a.off), int64(a.len), rnd)
}

// writeKeyMaterial writes a new keyslot's key material and flushes it
// before the header that points at it is written: in one flush epoch
// the disk may persist the header and not the material, and a changed
// keyslot then opens with neither passphrase (the crash explorer found
// such states in keyslot change, LUKS1 and LUKS2; issue 31).
func writeKeyMaterial(dev volume.Device, material []byte, off int64) error {
	if err := writeAt(dev, material, off, false); err != nil {
		return err
	}
	return dev.Sync()
}

// wipeSynced wipes a dropped keyslot's material (the header that no
// longer points at it already flushed) and flushes the wipe, so that a
// command that reports the key removed has it gone from the disk.
func wipeSynced(dev volume.Device, off, n int64, rnd io.Reader) error {
	if err := wipe(dev, off, n, rnd); err != nil {
		return err
	}
	return dev.Sync()
}

// ChangeKey replaces the passphrase of the keyslot the credentials open
// with newPass (cryptsetup luksChangeKey) and returns the keyslot that
// holds it now. LUKS2 keeps the keyslot number and writes the new key
// material to a free area before the header switches to it; LUKS1 moves
// to a free keyslot when there is one (in place otherwise, with a
// warning: a crash at that moment would lose the keyslot).
func ChangeKey(ctx context.Context, hdr volume.Device, creds volume.Credentials, newPass []byte, o KeyslotOptions) (int, error) {
	u, err := unlockHeader(ctx, hdr, creds)
	if err != nil {
		return 0, err
	}
	defer clear(u.key)
	rnd := orRand(o.Rand)
	if u.l.v2 != nil {
		h := u.l.v2
		oldID := fmt.Sprint(u.slot)
		areas, err := h.meta.areas()
		if err != nil {
			return 0, err
		}
		old := areas[oldID]
		slot, err := addLUKS2(ctx, u.dev, h, u.digest, u.key, newPass, o, rnd, oldID)
		if err != nil {
			return 0, err
		}
		return slot, wipeSynced(u.dev, int64(old.off), int64(old.len), rnd)
	}
	h := u.l.v1
	slot, err := freeLUKS1Slot(h, o.Slot, u.slot)
	if err != nil {
		return 0, err
	}
	if slot < 0 {
		slot = u.slot
		o.warn(fmt.Sprintf("all LUKS1 keyslots are in use: keyslot %d is rewritten in place (a crash now would lose it)", slot))
	}
	iters, err := luks1Iterations(ctx, h, o.KDF)
	if err != nil {
		return 0, err
	}
	next := *h
	material, err := sealLUKS1Slot(ctx, &next, slot, u.key, newPass, iters, rnd)
	if err != nil {
		return 0, err
	}
	defer clear(material)
	oldOff, oldN := h.slotMaterial(u.slot)
	if slot != u.slot {
		next.Slots[u.slot] = luks1Slot{Active: luks1SlotDisabled, Offset: h.Slots[u.slot].Offset, Stripes: h.Slots[u.slot].Stripes}
	}
	off, _ := h.slotMaterial(slot)
	if err := writeKeyMaterial(u.dev, material, off); err != nil {
		return 0, err
	}
	if err := writeLUKS1Header(u.dev, &next); err != nil {
		return 0, err
	}
	*h = next
	if slot != u.slot {
		if err := wipeSynced(u.dev, oldOff, oldN, rnd); err != nil {
			return slot, err
		}
	}
	return slot, nil
}
