package twofish

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	xtwofish "golang.org/x/crypto/twofish"
	"golang.org/x/crypto/xts"

	"github.com/cryptvol/cryptvol/internal/cputime"
)

var benchSizes = []struct {
	name string
	n    int
}{{"4KiB", 4096}, {"1MiB", 1 << 20}}

func BenchmarkEncryptBlocks(b *testing.B) {
	for _, kn := range availableKernels() {
		c, _ := newWithKernel(make([]byte, 32), kn)
		for _, sz := range benchSizes {
			b.Run(kn.String()+"/"+sz.name, func(b *testing.B) {
				buf := make([]byte, sz.n)
				b.SetBytes(int64(sz.n))
				cpu := cputime.Process()
				for b.Loop() {
					c.EncryptBlocks(buf, buf)
				}
				reportCPU(b, sz.n, cputime.Process()-cpu)
			})
		}
	}
}

func BenchmarkDecryptBlocks(b *testing.B) {
	for _, kn := range availableKernels() {
		c, _ := newWithKernel(make([]byte, 32), kn)
		for _, sz := range benchSizes {
			b.Run(kn.String()+"/"+sz.name, func(b *testing.B) {
				buf := make([]byte, sz.n)
				b.SetBytes(int64(sz.n))
				cpu := cputime.Process()
				for b.Loop() {
					c.DecryptBlocks(buf, buf)
				}
				reportCPU(b, sz.n, cputime.Process()-cpu)
			})
		}
	}
}

// BenchmarkXTS measures XTS on 4096-byte buffers two ways: the fused
// EncryptXTS/DecryptXTS (one 4096-byte sector, and eight 512-byte sectors
// as TrueCrypt/VeraCrypt use), and the composition the sector layer would
// use without it (materialise the 256 tweaks, XOR, EncryptBlocks, XOR). The
// x-botan metric is the speed relative to `botan speed 'XTS(Twofish)'` on
// 4096-byte buffers measured in the same run (absent when botan is not
// installed).
func BenchmarkXTS(b *testing.B) {
	const size = 4096
	for _, kn := range availableKernels() {
		c, _ := newWithKernel(make([]byte, 32), kn)
		for _, dir := range []string{"encrypt", "decrypt"} {
			for _, sector := range []int{4096, 512} {
				b.Run(fmt.Sprintf("%v/fused%d/%s", kn, sector, dir), func(b *testing.B) {
					buf := make([]byte, size)
					tweaks := make([]byte, size/sector*16)
					b.SetBytes(size)
					cpu := cputime.Process()
					for b.Loop() {
						tweaks[0]++
						if dir == "encrypt" {
							c.EncryptXTS(buf, buf, tweaks, sector)
						} else {
							c.DecryptXTS(buf, buf, tweaks, sector)
						}
					}
					reportBotanRatio(b, dir, cputime.Process()-cpu)
				})
			}
			b.Run(kn.String()+"/composed4096/"+dir, func(b *testing.B) {
				buf := make([]byte, size)
				mask := make([]byte, size)
				tweak := make([]byte, 16)
				b.SetBytes(size)
				cpu := cputime.Process()
				for b.Loop() {
					tweak[0]++
					composedXTS(c, buf, tweak, mask, dir == "decrypt")
				}
				reportBotanRatio(b, dir, cputime.Process()-cpu)
			})
		}
	}
}

// composedXTS is XTS built only from EncryptBlocks/DecryptBlocks: the
// tweaks of one sector are expanded into mask first.
func composedXTS(c *Cipher, buf, tweak, mask []byte, decrypt bool) {
	lo := binary.LittleEndian.Uint64(tweak[0:])
	hi := binary.LittleEndian.Uint64(tweak[8:])
	for i := 0; i < len(mask); i += 16 {
		binary.LittleEndian.PutUint64(mask[i:], lo)
		binary.LittleEndian.PutUint64(mask[i+8:], hi)
		lo, hi = mulAlpha(lo, hi)
	}
	xorBytes(buf, mask)
	if decrypt {
		c.DecryptBlocks(buf, buf)
	} else {
		c.EncryptBlocks(buf, buf)
	}
	xorBytes(buf, mask)
}

func xorBytes(dst, src []byte) {
	for i := 0; i+8 <= len(dst); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], binary.LittleEndian.Uint64(dst[i:])^binary.LittleEndian.Uint64(src[i:]))
	}
}

// BenchmarkXCrypto is the reference: golang.org/x/crypto/twofish one block
// per call, and x/crypto/xts over it.
func BenchmarkXCrypto(b *testing.B) {
	ref, _ := xtwofish.NewCipher(make([]byte, 32))
	b.Run("ECB/4KiB", func(b *testing.B) {
		buf := make([]byte, 4096)
		b.SetBytes(4096)
		cpu := cputime.Process()
		for b.Loop() {
			for i := 0; i < len(buf); i += 16 {
				ref.Encrypt(buf[i:], buf[i:])
			}
		}
		reportCPU(b, 4096, cputime.Process()-cpu)
	})
	x, _ := xts.NewCipher(func(k []byte) (cipher.Block, error) { return xtwofish.NewCipher(k) }, make([]byte, 64))
	b.Run("XTS/encrypt", func(b *testing.B) {
		buf := make([]byte, 4096)
		b.SetBytes(4096)
		n := uint64(0)
		cpu := cputime.Process()
		for b.Loop() {
			n++
			x.Encrypt(buf, buf, n)
		}
		reportBotanRatio(b, "encrypt", cputime.Process()-cpu)
	})
}

// reportCPU adds cpu-MiB/s, the speed in CPU time, for size bytes per op.
func reportCPU(b *testing.B, size int, cpu time.Duration) {
	if cpu > 0 {
		b.ReportMetric(float64(b.N)*float64(size)/cpu.Seconds()/(1<<20), "cpu-MiB/s")
	}
}

var botan struct {
	once sync.Once
	mibs map[string]float64 // "encrypt"/"decrypt" -> MiB/s, wall clock
	cpu  float64            // MiB per CPU second, both directions together
}

// reportBotanRatio adds the metrics x-botan, this benchmark's speed divided
// by botan's XTS(Twofish) speed on 4096-byte buffers in the same direction
// (both wall clock), and, where CPU time is measurable, cpu-MiB/s and
// x-botan-cpu, the same ratio in CPU time, which other jobs on a shared
// machine disturb far less. cpu is the CPU time the benchmark loop used.
func reportBotanRatio(b *testing.B, dir string, cpu time.Duration) {
	botan.once.Do(func() {
		cmd := exec.Command("botan", "speed", "--msec=2000", "--buf-size=4096", "XTS(Twofish)")
		out, err := cmd.Output()
		if err != nil {
			return
		}
		botan.mibs = map[string]float64{}
		total := 0.0
		re := regexp.MustCompile(`(encrypt|decrypt) buffer size 4096 bytes: ([0-9.]+) MiB/sec .*\(([0-9.]+) MiB in`)
		for _, m := range re.FindAllStringSubmatch(string(out), -1) {
			v, _ := strconv.ParseFloat(m[2], 64)
			botan.mibs[m[1]] = v
			n, _ := strconv.ParseFloat(m[3], 64)
			total += n
		}
		st := cmd.ProcessState
		if used := (st.UserTime() + st.SystemTime()).Seconds(); used > 0 {
			botan.cpu = total / used
		}
	})
	if ref := botan.mibs[dir]; ref > 0 && b.Elapsed() > 0 {
		mibs := float64(b.N) * 4096 / b.Elapsed().Seconds() / (1 << 20)
		b.ReportMetric(ref, "botan-MiB/s")
		b.ReportMetric(mibs/ref, "x-botan")
	}
	reportCPU(b, 4096, cpu)
	if cpu > 0 {
		mibs := float64(b.N) * 4096 / cpu.Seconds() / (1 << 20)
		if botan.cpu > 0 {
			b.ReportMetric(botan.cpu, "botan-cpu-MiB/s")
			b.ReportMetric(mibs/botan.cpu, "x-botan-cpu")
		}
	}
}
