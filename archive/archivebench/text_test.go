package archivebench

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the output")

func f(x float64) *float64 { return &x }

// textResults are two runs' figures: a full one (all stores, cold reads
// where measured, append scaling at two sizes) and a minimal one
// (random content, apparent sizes, no other store, no scaling).
var textResults = []*Result{
	{Dir: "/tmp/x", Content: "jpeg", Threads: 2, Files: 500, TotalBytes: 3300000, MinSize: 3072, MaxSize: 10240, Reps: 5, DiskUsage: true,
		Stores: []StoreResult{
			{Store: "files", AddOneSeconds: 0.0012345, ReadColdSeconds: f(0.5), ReadWarmSeconds: 0.02, DiskBytes: 4000000, ApparentBytes: 3300000, MinAddOneSeconds: 0.001, MaxAddOneSeconds: 0.003, MinReadColdSeconds: f(0.4), MaxReadColdSeconds: f(0.9), MinReadWarmSeconds: 0.019, MaxReadWarmSeconds: 0.021},
			{Store: "zip", AddOneSeconds: 1.5, ReadWarmSeconds: 0.03, DiskBytes: 3200000, ApparentBytes: 3200000, MinAddOneSeconds: 1.2, MaxAddOneSeconds: 1.9, MinReadWarmSeconds: 0.029, MaxReadWarmSeconds: 0.05},
			{Store: "zip-store", AddOneSeconds: 0.9, ReadColdSeconds: f(0.2), ReadWarmSeconds: 0.01, DiskBytes: 3300000, MinAddOneSeconds: 0.8, MaxAddOneSeconds: 1, MinReadColdSeconds: f(0.1), MaxReadColdSeconds: f(0.3), MinReadWarmSeconds: 0.009, MaxReadWarmSeconds: 0.011},
			{Store: "archive", AddOneSeconds: 0.0004, ReadColdSeconds: f(0.1), ReadWarmSeconds: 0.004, DiskBytes: 3400000, MinAddOneSeconds: 0.0003, MaxAddOneSeconds: 0.0009, MinReadColdSeconds: f(0.09), MaxReadColdSeconds: f(0.2), MinReadWarmSeconds: 0.0039, MaxReadWarmSeconds: 0.0041},
			{Store: "archive-1core", AddOneSeconds: 0.0004, ReadWarmSeconds: 0.008, DiskBytes: 3400000, MinAddOneSeconds: 0.0003, MaxAddOneSeconds: 0.0005, MinReadWarmSeconds: 0.007, MaxReadWarmSeconds: 0.009},
		},
		Scaling: []ScaleResult{
			{Store: "archive", Entries: 1000, Appends: 15, AppendSeconds: 0.0005, FastestSeconds: 0.0004, SlowestSeconds: 0.0009, BytesWritten: 4000, OpenSeconds: 0.002, IndexMemoryBytes: 100000},
			{Store: "archive-nosync", Entries: 1000, AppendSeconds: 0.00005, FastestSeconds: 0.00004, SlowestSeconds: 0.00006},
			{Store: "archive-reopen", Entries: 1000, AppendSeconds: 0.003, FastestSeconds: 0.002, SlowestSeconds: 0.004},
			{Store: "zip", Entries: 1000, AppendSeconds: 0.1, FastestSeconds: 0.09, SlowestSeconds: 0.2, BytesWritten: 6000000},
			{Store: "archive", Entries: 100000, Appends: 15, AppendSeconds: 0.0006, FastestSeconds: 0.0005, SlowestSeconds: 0.0007, BytesWritten: 4100, OpenSeconds: 0.2, IndexMemoryBytes: 10000000},
			{Store: "archive-nosync", Entries: 100000, AppendSeconds: 0.00006, FastestSeconds: 0.00005, SlowestSeconds: 0.00007},
			{Store: "archive-reopen", Entries: 100000, AppendSeconds: 0.3, FastestSeconds: 0.2, SlowestSeconds: 0.4},
			{Store: "zip", Entries: 100000, AppendSeconds: 10, FastestSeconds: 9, SlowestSeconds: 12, BytesWritten: 600000000},
		}},
	{Dir: "/d", Content: "random", Threads: 1, Files: 3, Reps: 1, MinSize: 1, MaxSize: 2,
		Stores: []StoreResult{{Store: "archive", AddOneSeconds: 2, ReadWarmSeconds: 3}}},
}

// The table and the CSV of `cryptvol benchmark archive` are byte for byte
// what they were when the command wrote them (testdata/*.golden, made by
// the command's code before it moved here).
func TestWriteTableAndCSV(t *testing.T) {
	for i, r := range textResults {
		var table, csv bytes.Buffer
		r.WriteTable(&table)
		if err := r.WriteCSV(&csv); err != nil {
			t.Fatal(err)
		}
		for ext, got := range map[string][]byte{"table": table.Bytes(), "csv": csv.Bytes()} {
			golden := filepath.Join("testdata", fmt.Sprintf("result%d.%s.golden", i, ext))
			if *update {
				os.WriteFile(golden, got, 0o644)
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs:\n%s", golden, got)
			}
		}
	}
}

// A figure whose min–max is wide is warned about, by name; a tight one
// is not.
func TestSpreadWarnings(t *testing.T) {
	w := strings.Join(textResults[0].SpreadWarnings(), "\n")
	for _, name := range []string{"files add one", "zip read all (warm)", "files read all (cold)", "zip append at 1000 members"} {
		if !strings.Contains(w, name) {
			t.Errorf("no warning for %s in:\n%s", name, w)
		}
	}
	if strings.Contains(w, "archive read all (warm)") {
		t.Errorf("a 5%% spread warned about:\n%s", w)
	}
}

func TestParseSizes(t *testing.T) {
	for in, want := range map[string]string{"": "[]", "none": "[]", " 1_000, 100000 ": "[1000 100000]", "5": "[5]"} {
		got, err := ParseSizes(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("ParseSizes(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "1,x", "1,,2", "-3"} {
		if _, err := ParseSizes(in); err == nil {
			t.Errorf("ParseSizes(%q) accepted", in)
		}
	}
}
