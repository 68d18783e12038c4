//go:build unix

package sector

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/ciphers"
	"github.com/cryptvol/cryptvol/internal/cputime"
)

// TestBusyHelper is a CPU-bound process for BenchmarkXTSStream (the test
// binary run again with SECTOR_BUSY=1); otherwise it does nothing.
func TestBusyHelper(t *testing.T) {
	if os.Getenv("SECTOR_BUSY") != "1" {
		t.Skip("only a helper process of BenchmarkXTSStream")
	}
	x := uint64(1)
	for x != 0 {
		x = x*6364136223846793005 + 1442695040888963407
	}
}

// BenchmarkXTSStream reads a file in 1 MiB chunks and decrypts each on two
// workers, as a volume read does, on an idle machine and beside two
// CPU-bound processes, with the pool's spinning as it is and turned off.
// It reports MiB/s and the process's CPU time per MiB (cpu-ms/MiB): the
// spinning pays on an idle machine (more MiB/s) and must cost nothing
// beside busy processes (the same cpu-ms/MiB as with spinning off), where
// the CPU it would burn is taken from the others and from its own shares.
//
//	go test -run XXX -bench XTSStream ./sector
func BenchmarkXTSStream(b *testing.B) {
	c, _ := ciphers.LookupChain("AES")
	key := make([]byte, 64)
	rand.Read(key)
	m0, err := ChainXTS(c, key, 512)
	if err != nil {
		b.Fatal(err)
	}
	m := Parallel(m0, 2)
	f, err := os.CreateTemp(b.TempDir(), "stream")
	if err != nil {
		b.Fatal(err)
	}
	const chunks = 32
	f.Write(make([]byte, chunks<<20))
	defer f.Close()
	buf := make([]byte, 1<<20)
	for _, busy := range []int{0, 2} {
		for _, spin := range []bool{true, false} {
			name := fmt.Sprintf("busy=%d/spin=%v", busy, spin)
			b.Run(name, func(b *testing.B) {
				stop := startBusy(b, busy)
				defer stop()
				if !spin {
					spinLimit.Store(0)
					defer spinLimit.Store(int64(spinFor))
				}
				spinOff.Store(0)
				b.SetBytes(1 << 20)
				b.ResetTimer()
				cpu0 := cputime.Process()
				for i := 0; i < b.N; i++ {
					f.ReadAt(buf, int64(i%chunks)<<20)
					m.Decrypt(buf, buf, uint64(i))
				}
				b.StopTimer()
				b.ReportMetric(float64(cputime.Process()-cpu0)/1e6/float64(b.N), "cpu-ms/MiB")
			})
		}
	}
}

func startBusy(b *testing.B, n int) func() {
	var cmds []*exec.Cmd
	for i := 0; i < n; i++ {
		c := exec.Command(os.Args[0], "-test.run=^TestBusyHelper$")
		c.Env = append(os.Environ(), "SECTOR_BUSY=1")
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	time.Sleep(100 * time.Millisecond)
	return func() {
		for _, c := range cmds {
			c.Process.Kill()
			c.Wait()
		}
	}
}
