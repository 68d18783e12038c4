//go:build !amd64 || purego

package adiantum

const nhImplGeneric = 0

// nhImpl: no NH kernel for this architecture yet; the generic Go one
// serves.
var nhImpl = nhImplGeneric

func nhImpls() []int { return []int{nhImplGeneric} }

func nhImplName(int) string { return "generic" }

func nhWith(_ int, k *nhKey, msg []byte, out *[4]uint64) { nhGeneric(k, msg, out) }
