package archivebench

import (
	"bytes"
	"context"
	"image/jpeg"
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
		// Deflate takes a few percent out of JPEG files; nothing more.
		least := res.TotalBytes
		if s == "zip" {
			least = least * 9 / 10
		}
		if r == nil || r.ReadWarmSeconds <= 0 || r.AddOneSeconds <= 0 || r.ApparentBytes < least {
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

// The thumbnails are JPEG files that decode, near the sizes asked for,
// the same on every call; random content has exactly those sizes.
func TestCorpusContent(t *testing.T) {
	c := newCorpus(7, 3<<10, 10<<10, "jpeg")
	for i := 0; i < 40; i++ {
		b := c.data(i, nil)
		img, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("thumbnail %d is not a JPEG: %v", i, err)
		}
		if w := img.Bounds().Dx(); w < 16 {
			t.Fatalf("thumbnail %d is %d pixels wide", i, w)
		}
		if len(b) > 10<<10 || len(b) < 2<<10 {
			t.Fatalf("thumbnail %d: %d bytes, want about 3-10 KiB", i, len(b))
		}
		if !bytes.Equal(b, newCorpus(7, 3<<10, 10<<10, "jpeg").data(i, nil)) {
			t.Fatalf("thumbnail %d differs between two corpora of one seed", i)
		}
	}
	if !bytes.Equal(c.data(3, nil), c.data(3+thumbnailPool, nil)) {
		t.Fatal("the pool does not repeat")
	}
	r := newCorpus(7, 3<<10, 10<<10, "random")
	for i := 0; i < 40; i++ {
		if n := len(r.data(i, nil)); n < 3<<10 || n > 10<<10 {
			t.Fatalf("random file %d: %d bytes", i, n)
		}
	}
}
