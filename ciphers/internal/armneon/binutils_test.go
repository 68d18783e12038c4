package armneon

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The GNU assemblers that check the encodings (Debian's
// binutils-arm-linux-gnueabihf and binutils-aarch64-linux-gnu; .ci/run
// installs them).
var assemblers = map[string][2]string{
	"arm":   {"arm-linux-gnueabihf-as", ".syntax unified\n.arch armv7-a\n.fpu neon\n.arm\n"},
	"arm64": {"aarch64-linux-gnu-as", ".arch armv8-a\n"},
}

// assemble returns the words GNU as produces for the mnemonics, in order.
func assemble(t *testing.T, arch string, mnemonics []string) []uint32 {
	t.Helper()
	as := assemblers[arch]
	if _, err := exec.LookPath(as[0]); err != nil {
		t.Skipf("%s not installed (Debian package binutils-%s); the table of TestKnownEncodings still ran", as[0],
			map[string]string{"arm": "arm-linux-gnueabihf", "arm64": "aarch64-linux-gnu"}[arch])
	}
	objdump := strings.TrimSuffix(as[0], "as") + "objdump"
	dir := t.TempDir()
	src := filepath.Join(dir, "x.s")
	obj := filepath.Join(dir, "x.o")
	text := as[1] + strings.Join(mnemonics, "\n") + "\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as[0], "-o", obj, src).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", as[0], err, out)
	}
	out, err := exec.Command(objdump, "-d", obj).Output()
	if err != nil {
		t.Fatalf("%s: %v", objdump, err)
	}
	re := regexp.MustCompile(`^\s*[0-9a-f]+:\s+([0-9a-f]{8})\s`)
	var words []uint32
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			w, _ := strconv.ParseUint(m[1], 16, 32)
			words = append(words, uint32(w))
		}
	}
	if len(words) != len(mnemonics) {
		t.Fatalf("%s produced %d words for %d instructions", as[0], len(words), len(mnemonics))
	}
	return words
}

var wordLine = regexp.MustCompile(`^\s*WORD \$0x([0-9a-f]{8}) // (.*)$`)

// checkLines assembles the comment of every WORD line and compares.
func checkLines(t *testing.T, arch, name string, lines []string) {
	t.Helper()
	var want []uint32
	var mn []string
	var where []string
	for i, l := range lines {
		m := wordLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		w, _ := strconv.ParseUint(m[1], 16, 32)
		want = append(want, uint32(w))
		mn = append(mn, m[2])
		where = append(where, fmt.Sprintf("%s:%d", name, i+1))
	}
	if len(mn) == 0 {
		return
	}
	got := assemble(t, arch, mn)
	bad := 0
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: %s: WORD $0x%08x, GNU as says 0x%08x", where[i], mn[i], want[i], got[i])
			if bad++; bad > 20 {
				t.FailNow()
			}
		}
	}
}

// everyForm is one instruction of each kind and shape the targets emit,
// with high register numbers to exercise the D/N/M bits.
func everyForm(arm bool) []Inst {
	var ins []Inst
	three := []Kind{Eor, And, Orr, Bic, mov}
	for _, k := range three {
		ins = append(ins, Inst{Kind: k, Dst: []V{15}, Src: []V{9, 14}}, Inst{Kind: k, Dst: []V{1}, Src: []V{8, 3}})
	}
	ins = append(ins,
		Inst{Kind: Bit, Dst: []V{13}, Src: []V{13, 7, 12}},
		Inst{Kind: Not, Dst: []V{11}, Src: []V{12}},
		Inst{Kind: Rev16, Dst: []V{10}, Src: []V{9}},
		Inst{Kind: Rev64, Dst: []V{2}, Src: []V{15}},
		Inst{Kind: Rev32, Dst: []V{12}, Src: []V{3}},
		Inst{Kind: Add, Dst: []V{14}, Src: []V{9, 1}, Esize: 32},
		Inst{Kind: LoadAt, Dst: []V{10}, Base: 3, Off: 48},
		Inst{Kind: Const, Dst: []V{9}, C: 0x5555555555555555},
		Inst{Kind: Const, Dst: []V{14}, C: 0x0f0f0f0f0f0f0f0f},
		Inst{Kind: Const, Dst: []V{3}, C: 0x00ff00ff00ff00ff},
		Inst{Kind: Const, Dst: []V{12}, C: 0x0000ffff0000ffff},
		Inst{Kind: Const, Dst: []V{4}, C: 0x00000000ffffffff},
		Inst{Kind: Const, Dst: []V{8}, C: 0xffff0000ffff0000},
		Inst{Kind: Load, Dst: []V{14}, Base: 1},
		Inst{Kind: LoadStep, Dst: []V{13}, Base: 3, Off: 4},
		Inst{Kind: LoadStep, Dst: []V{2}, Base: 8, Off: 12},
		Inst{Kind: Store, Src: []V{9}, Base: 2},
		Inst{Kind: LoadDup64, Dst: []V{13}, Base: 0, Off: 952},
	)
	for _, es := range []int{8, 16, 32, 64} {
		for _, n := range []int{1, 3, 4, es / 2, es - 1} {
			ins = append(ins,
				Inst{Kind: Shl, Dst: []V{12}, Src: []V{5}, Imm: n, Esize: es},
				Inst{Kind: Shr, Dst: []V{5}, Src: []V{13}, Imm: n, Esize: es},
				Inst{Kind: Sri, Dst: []V{9}, Src: []V{9, 15}, Imm: n, Esize: es},
				Inst{Kind: Sli, Dst: []V{8}, Src: []V{8, 1}, Imm: n, Esize: es},
			)
		}
	}
	if arm {
		for _, es := range []int{8, 16, 32} {
			ins = append(ins, Inst{Kind: Trn, Dst: []V{3, 12}, Src: []V{3, 12}, Esize: es})
		}
		ins = append(ins, Inst{Kind: SwapHL, Dst: []V{0, 9}, Src: []V{0, 9}}, Inst{Kind: SwapHL, Dst: []V{12, 2}, Src: []V{12, 2}})
	} else {
		for _, es := range []int{8, 16, 32, 64} {
			ins = append(ins, Inst{Kind: Trn1, Dst: []V{30}, Src: []V{17, 2}, Esize: es},
				Inst{Kind: Trn2, Dst: []V{1}, Src: []V{31, 16}, Esize: es})
		}
		ins = append(ins, Inst{Kind: Eor, Dst: []V{31}, Src: []V{16, 29}}, Inst{Kind: Load, Dst: []V{27}, Base: 19},
			Inst{Kind: LoadDup64, Dst: []V{21}, Base: 7, Off: 8})
	}
	return ins
}

func encodeAll(t Target, ins []Inst) []string {
	var lines []string
	for _, in := range ins {
		lines = append(lines, t.Encode(in)...)
	}
	for _, r := range []int{0, 7, 8, 15} {
		lines = append(lines, t.Spill(r, 6, 16*r)...)
		lines = append(lines, t.Reload(r, 6, 16*r)...)
	}
	return lines
}

func TestEveryFormMatchesBinutils(t *testing.T) {
	t.Run("arm", func(t *testing.T) {
		lines := encodeAll(ARM{TmpReg: 4}, append(everyForm(true), Inst{Kind: LoadDup32, Dst: []V{11}, Base: 0, Off: 512}))
		checkLines(t, "arm", "forms", lines)
	})
	t.Run("arm64", func(t *testing.T) {
		checkLines(t, "arm64", "forms", encodeAll(ARM64{}, everyForm(false)))
	})
}

// TestGeneratedWordsMatchBinutils assembles the comment of every WORD in
// the repository's generated ARM and arm64 kernels and compares the words.
func TestGeneratedWordsMatchBinutils(t *testing.T) {
	root := "../../.." // the module root
	n := 0
	err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && (info.Name() == ".git" || info.Name() == "testdata") {
			return filepath.SkipDir
		}
		arch := ""
		switch {
		case strings.HasSuffix(path, "_arm.s"):
			arch = "arm"
		case strings.HasSuffix(path, "_arm64.s"):
			arch = "arm64"
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), "WORD $") {
			return nil
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			checkLines(t, arch, path, strings.Split(string(data), "\n"))
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no generated ARM kernels found")
	}
}
