package archivebench

import (
	"context"
	"testing"
)

// A small run end to end: every store reads back every byte it was given
// (Run checks the byte counts), and the figures are filled in.
func TestRunSmall(t *testing.T) {
	res, err := Run(context.Background(), Options{Dir: t.TempDir(), Files: 40, Reps: 2, Sizes: []int{30, 60}, Appends: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"files", "zip", "zip-store", "archive"} {
		r := res.Store(s)
		if r == nil || r.ReadWarmSeconds <= 0 || r.AddOneSeconds <= 0 || r.ApparentBytes < res.TotalBytes {
			t.Fatalf("%s: %+v", s, r)
		}
	}
	for _, s := range []string{"archive", "archive-nosync", "archive-reopen", "zip"} {
		for _, n := range []int{30, 60} {
			if r := res.Scale(s, n); r == nil || r.AppendSeconds <= 0 {
				t.Fatalf("scaling %s at %d: %+v", s, n, r)
			}
		}
	}
	t.Logf("%+v", res)
}
