package archivebench

import (
	"bytes"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"sync"
)

// Thumbnails are real JPEG files: a synthetic picture (a gradient, a few
// discs, sensor-like noise) encoded by image/jpeg, so a zip stores them as
// zip tools do, deflated -- which matters: deflate finds a few percent to
// take out of JPEG data and writes Huffman-coded blocks that must be decoded
// on every read, while on uniformly random bytes it falls back to stored
// blocks that read at the speed of a copy. The random content remains as an
// option (Options.Content) for that best case of zip.

// maxThumbnail is the largest file made as a JPEG: pictures grow with the
// square root of the target, and beyond this the benchmark is about bulk
// data, not thumbnails.
const maxThumbnail = 1 << 20

// thumbnailPool is how many distinct thumbnails a corpus makes; file i is
// thumbnail i mod thumbnailPool (the append-scaling test adds 100,000
// files, and encoding each would take longer than what it measures).
const thumbnailPool = 2048

// thumbnails caches a corpus's JPEG files.
type thumbnails struct {
	mu    sync.Mutex
	files map[int][]byte
}

// thumbnail returns file i of the pool: a JPEG of about target bytes and
// at most max, by picture area and then JPEG quality.
func (c corpus) thumbnail(i int) []byte {
	i %= thumbnailPool
	c.thumbs.mu.Lock()
	defer c.thumbs.mu.Unlock()
	if b, ok := c.thumbs.files[i]; ok {
		return b
	}
	if c.thumbs.files == nil {
		c.thumbs.files = map[int][]byte{}
	}
	r := rand.New(rand.NewPCG(c.seed^0x7468756d62, uint64(i)))
	target := c.size(i)
	// About 0.22 bytes per pixel at quality 75 for these pictures, 4:3.
	w := max(16, int(math.Sqrt(float64(target)/0.22*4/3)))
	img := picture(r, w, max(16, w*3/4))
	var b []byte
	for q := 75; ; {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
			panic(err) // encoding into memory does not fail
		}
		b = buf.Bytes()
		switch {
		case len(b) > c.max && q > 10:
			q -= 5
			continue
		case len(b) < c.min && q < 95 && len(b) < c.max:
			q += 5
			continue
		}
		break
	}
	c.thumbs.files[i] = b
	return b
}

// picture draws a w x h YCbCr image: a diagonal gradient, five flat discs
// and noise of +-12 levels, which JPEG encodes at about the density of a
// photograph's thumbnail.
func picture(r *rand.Rand, w, h int) *image.YCbCr {
	img := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	y0, y1 := r.Float64()*255, r.Float64()*255
	type disc struct{ x, y, rad2, luma, cb, cr float64 }
	discs := make([]disc, 5)
	for k := range discs {
		rad := 5 + r.Float64()*float64(h)/2
		discs[k] = disc{r.Float64() * float64(w), r.Float64() * float64(h), rad * rad, r.Float64() * 255, 64 + r.Float64()*128, 64 + r.Float64()*128}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := y0 + (y1-y0)*float64(x+y)/float64(w+h)
			cb, cr := 128.0, 128.0
			for _, d := range discs {
				dx, dy := float64(x)-d.x, float64(y)-d.y
				if dx*dx+dy*dy < d.rad2 {
					v = (v + d.luma) / 2
					cb, cr = d.cb, d.cr
				}
			}
			v += float64(r.IntN(25) - 12)
			img.Y[img.YOffset(x, y)] = level(v)
			ci := img.COffset(x, y)
			img.Cb[ci], img.Cr[ci] = level(cb), level(cr)
		}
	}
	return img
}

func level(v float64) uint8 { return uint8(min(255, max(0, v))) }
