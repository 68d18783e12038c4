package camellia

import "testing"

// impl is one code path the tests must cover.
type impl struct {
	name string
	use  func() (restore func())
}

// implementations lists every code path usable on this machine; tests run
// the same vectors through each.
func implementations() []impl {
	generic := impl{"generic", func() func() {
		old := forceGeneric
		forceGeneric = true
		return func() { forceGeneric = old }
	}}
	out := []impl{generic}
	if accelerated() {
		out = append(out, impl{"accelerated", func() func() {
			oldForce, oldTail := forceGeneric, acceleratedMinTail
			forceGeneric, acceleratedMinTail = false, BlockSize
			return func() { forceGeneric, acceleratedMinTail = oldForce, oldTail }
		}})
	}
	return out
}

func TestGFNIGeneratorConstants(t *testing.T) {
	// gen_gfni.go writes these immediates as literals.
	if gfniPreConst != 0x08 || gfniPostConst != [3]byte{0x6e, 0xdc, 0x37} {
		t.Fatalf("immediates %#02x %x differ from gen_gfni.go's", gfniPreConst, gfniPostConst)
	}
}
