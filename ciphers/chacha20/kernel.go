package chacha20

// A kernel XORs src, a whole number of its lumps (blocks*64 bytes each),
// with the key stream of the state's next blocks into dst, and moves
// state[12] past them (the 32-bit counter wraps). Its dispatch (kernel.xor, one per
// architecture) calls it directly, never through a function value, so the
// stack buffers handed to it stay on the stack.
type kernel struct {
	id     kernelID
	name   string // "avx2", ...: the code path's name in `cryptvol version`
	blocks int    // per lump
}

type kernelID uint8

const (
	kernelGeneric kernelID = iota
	kernelAVX512
	kernelAVX2
	kernelSSSE3
	kernelSSE2
	kernelNEON
)

var genericKernel = kernel{kernelGeneric, "generic", 1}

// kernels are the ones this CPU runs, widest first; the last one's lumps
// are at most maxTailLump bytes.
var kernels = append(archKernels(), genericKernel)

// haveKernel reports whether an architecture kernel runs here.
func haveKernel() bool { return kernels[0].id != kernelGeneric }

func init() {
	if kernels[len(kernels)-1].blocks*BlockSize > maxTailLump {
		panic("chacha20: narrowest kernel makes lumps larger than maxTailLump")
	}
}

// xorLumps runs the kernels over as much of src as whole lumps cover,
// widest kernel first, and returns how many bytes it did.
func xorLumps(state *[16]uint32, rounds int, dst, src []byte) int {
	done := 0
	for _, k := range kernels {
		size := k.blocks * BlockSize
		if lumps := (len(src) - done) / size; lumps > 0 {
			n := lumps * size
			k.xor(state, rounds, dst[done:done+n], src[done:done+n])
			done += n
		}
	}
	return done
}

// Implementation names the code path New's ChaCha20 streams take here.
func Implementation() string {
	if !haveKernel() {
		return "golang.org/x/crypto/chacha20"
	}
	return XImplementation()
}

// XImplementation names the kernels of XKey streams and of NewRounds with
// 8 or 12 rounds (Adiantum's XChaCha12 and XChaCha20), widest first and
// joined by "+": "avx512+avx2+ssse3" on this project's AVX-512 machine,
// "generic" where there is no architecture kernel.
func XImplementation() string {
	s := ""
	for i, k := range kernels {
		if i == len(kernels)-1 && i > 0 {
			break // the generic kernel only serves single blocks here
		}
		if s != "" {
			s += "+"
		}
		s += k.name
	}
	return s
}
