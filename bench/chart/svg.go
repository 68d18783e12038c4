package chart

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// fontStack is the SVG's font: the viewer's own, so nothing is fetched or
// embedded.
const fontStack = "DejaVu Sans, Liberation Sans, Helvetica, Arial, sans-serif"

// palette is Okabe and Ito's colour-blind-safe set, one colour per series.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"}

// charWidth estimates the width of one character at size px, to leave
// room for labels (the viewer lays the text out; this only sizes margins).
func charWidth(px float64) float64 { return 0.6 * px }

// svg accumulates one SVG document.
type svg struct {
	b    strings.Builder
	w, h float64
}

func (s *svg) printf(format string, args ...any) { fmt.Fprintf(&s.b, format, args...) }

// esc escapes text for element content and attribute values alike.
func esc(v string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(v))
	return b.String()
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func (s *svg) text(x, y, px float64, anchor, extra, v string) {
	s.printf(`<text x="%s" y="%s" font-size="%s" text-anchor="%s"%s>%s</text>`+"\n", num(x), num(y), num(px), anchor, extra, esc(v))
}

func (s *svg) rect(x, y, w, h float64, fill, extra string) {
	s.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>`+"\n", num(x), num(y), num(w), num(h), fill, extra)
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string) {
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1"/>`+"\n", num(x1), num(y1), num(x2), num(y2), stroke)
}

// document wraps the drawing in the <svg> element.
func (s *svg) document(title string) string {
	return fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="%s" role="img" aria-label="%s">`+"\n<title>%s</title>\n"+
		`<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n%s</svg>\n",
		num(s.w), num(s.h), num(s.w), num(s.h), fontStack, esc(title), esc(title), s.b.String())
}

// niceStep returns a round tick step (1, 2 or 5 times a power of ten)
// that splits [0, max] into about n intervals.
func niceStep(max float64, n int) float64 {
	if max <= 0 || math.IsNaN(max) || math.IsInf(max, 0) {
		return 1
	}
	raw := max / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// formatTick prints a tick value without trailing zeros.
func formatTick(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// barChart is a horizontal grouped bar chart: one group per category, one
// bar per series in it.
type barChart struct {
	title, subtitle string
	unit            string // the value axis' unit, e.g. "MB/s"
	categories      []string
	series          []string
	// values[c][s]; NaN for no value (no bar drawn).
	values [][]float64
	// lo[c][s], hi[c][s]: the value's range over its samples, drawn as an
	// error bar; nil, or NaN, where there is none.
	lo, hi [][]float64
	format func(float64) string // a bar's value label
}

// errorBar returns the range of bar (c, s), and whether it has one.
func (c barChart) errorBar(ci, si int) (lo, hi float64, ok bool) {
	if ci >= len(c.lo) || ci >= len(c.hi) || si >= len(c.lo[ci]) || si >= len(c.hi[ci]) {
		return 0, 0, false
	}
	lo, hi = c.lo[ci][si], c.hi[ci][si]
	return lo, hi, !math.IsNaN(lo) && !math.IsNaN(hi) && hi >= lo && lo > 0
}

const (
	chartWidth = 880.0
	barHeight  = 12.0
	barGap     = 2.0
	groupGap   = 12.0
)

func (c barChart) svg() string {
	s := &svg{w: chartWidth}
	labelW := 0.0
	for _, cat := range c.categories {
		labelW = max(labelW, float64(len([]rune(cat)))*charWidth(12))
	}
	x0 := labelW + 20
	x1 := chartWidth - 80 // room for the value labels
	maxV := 0.0
	for ci, row := range c.values {
		for si, v := range row {
			if !math.IsNaN(v) {
				maxV = max(maxV, v)
			}
			if _, hi, ok := c.errorBar(ci, si); ok {
				maxV = max(maxV, hi)
			}
		}
	}
	step := niceStep(maxV, 5)
	top := math.Max(step*math.Ceil(maxV/step), step)
	scale := func(v float64) float64 { return (x1 - x0) * v / top }

	s.text(16, 24, 15, "start", ` font-weight="bold"`, c.title)
	y := 42.0
	if c.subtitle != "" {
		s.text(16, y, 11, "start", ` fill="#444444"`, c.subtitle)
		y += 18
	}
	// Legend.
	lx := x0
	for i, name := range c.series {
		s.rect(lx, y-9, 10, 10, palette[i%len(palette)], "")
		s.text(lx+14, y, 11, "start", "", name)
		lx += 14 + float64(len([]rune(name)))*charWidth(11) + 18
	}
	plotTop := y + 14
	groupH := float64(len(c.series))*(barHeight+barGap) - barGap
	plotBottom := plotTop + float64(len(c.categories))*(groupH+groupGap)
	s.h = plotBottom + 42

	// Grid and value axis.
	for v := 0.0; v <= top+step/2; v += step {
		x := x0 + scale(v)
		s.line(x, plotTop-4, x, plotBottom, "#dddddd")
		s.text(x, plotBottom+16, 11, "middle", "", formatTick(v))
	}
	s.text((x0+x1)/2, plotBottom+34, 11, "middle", "", c.unit)
	s.line(x0, plotTop-4, x0, plotBottom, "#666666")

	for ci, cat := range c.categories {
		gy := plotTop + float64(ci)*(groupH+groupGap)
		s.text(x0-8, gy+groupH/2+4, 12, "end", "", cat)
		for si, name := range c.series {
			v := c.values[ci][si]
			if math.IsNaN(v) {
				continue
			}
			by := gy + float64(si)*(barHeight+barGap)
			attrs := fmt.Sprintf(` class="bar" data-category="%s" data-series="%s" data-value="%s"`,
				esc(cat), esc(name), strconv.FormatFloat(v, 'g', -1, 64))
			s.rect(x0, by, math.Max(scale(v), 0.5), barHeight, palette[si%len(palette)], attrs)
			labelX := x0 + scale(v)
			if lo, hi, ok := c.errorBar(ci, si); ok {
				// The range over the run's samples: a whisker with caps.
				mid := by + barHeight/2
				s.printf(`<g class="range" data-category="%s" data-series="%s" data-min="%s" data-max="%s">`,
					esc(cat), esc(name), strconv.FormatFloat(lo, 'g', -1, 64), strconv.FormatFloat(hi, 'g', -1, 64))
				s.line(x0+scale(lo), mid, x0+scale(hi), mid, "#222222")
				s.line(x0+scale(lo), mid-3, x0+scale(lo), mid+3, "#222222")
				s.line(x0+scale(hi), mid-3, x0+scale(hi), mid+3, "#222222")
				s.printf("</g>\n")
				labelX = max(labelX, x0+scale(hi))
			}
			s.text(labelX+4, by+barHeight-2, 10, "start", ` fill="#333333"`, c.format(v))
		}
	}
	return s.document(c.title)
}

// heatMap is a grid of coloured cells, one per (row, column) value.
type heatMap struct {
	title, subtitle string
	unit            string
	rows, cols      []string
	values          [][]float64 // values[r][c]; NaN where nothing was measured
	format          func(float64) string
}

func (m heatMap) svg() string {
	const cellW, cellH, angle = 78.0, 30.0, 35.0
	labelW := 0.0
	for _, r := range m.rows {
		labelW = max(labelW, float64(len([]rune(r)))*charWidth(12))
	}
	colLabel := 0.0
	for _, c := range m.cols {
		colLabel = max(colLabel, float64(len([]rune(c)))*charWidth(11))
	}
	x0 := labelW + 24
	headerH := 52.0
	if m.subtitle != "" {
		headerH += 16
	}
	y0 := headerH + colLabel*math.Sin(angle*math.Pi/180) + 12
	s := &svg{w: math.Max(x0+float64(len(m.cols))*cellW+colLabel*math.Cos(angle*math.Pi/180)+20, 520)}
	s.h = y0 + float64(len(m.rows))*cellH + 70

	s.text(16, 24, 15, "start", ` font-weight="bold"`, m.title)
	if m.subtitle != "" {
		s.text(16, 42, 11, "start", ` fill="#444444"`, m.subtitle)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range m.values {
		for _, v := range row {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	for ci, c := range m.cols {
		x := x0 + float64(ci)*cellW + cellW/2
		s.printf(`<text x="%s" y="%s" font-size="11" text-anchor="start" transform="rotate(-%s %s %s)">%s</text>`+"\n",
			num(x), num(y0-8), num(angle), num(x), num(y0-8), esc(c))
	}
	for ri, r := range m.rows {
		y := y0 + float64(ri)*cellH
		s.text(x0-8, y+cellH/2+4, 12, "end", "", r)
		for ci, c := range m.cols {
			x := x0 + float64(ci)*cellW
			v := m.values[ri][ci]
			if math.IsNaN(v) {
				s.rect(x, y, cellW-2, cellH-2, "#f0f0f0", "")
				continue
			}
			t := 1.0
			if hi > lo {
				t = (v - lo) / (hi - lo)
			}
			attrs := fmt.Sprintf(` class="cell" data-row="%s" data-col="%s" data-value="%s"`,
				esc(r), esc(c), strconv.FormatFloat(v, 'g', -1, 64))
			s.rect(x, y, cellW-2, cellH-2, blues(t), attrs)
			ink := "#000000"
			if t > 0.55 {
				ink = "#ffffff"
			}
			s.text(x+cellW/2-1, y+cellH/2+3, 10, "middle", ` fill="`+ink+`"`, m.format(v))
		}
	}
	// Colour scale.
	ly := y0 + float64(len(m.rows))*cellH + 20
	s.printf(`<defs><linearGradient id="scale"><stop offset="0" stop-color="%s"/><stop offset="1" stop-color="%s"/></linearGradient></defs>`+"\n", blues(0), blues(1))
	s.rect(x0, ly, 200, 12, "url(#scale)", "")
	if !math.IsInf(lo, 0) {
		s.text(x0, ly+28, 10, "start", "", m.format(lo))
		s.text(x0+200, ly+28, 10, "end", "", m.format(hi))
	}
	s.text(x0+210, ly+10, 11, "start", "", m.unit)
	return s.document(m.title)
}

// blues maps t in [0, 1] from a pale to a dark blue.
func blues(t float64) string {
	t = math.Min(math.Max(t, 0), 1)
	lo, hi := [3]float64{0xef, 0xf3, 0xff}, [3]float64{0x08, 0x45, 0x94}
	var c [3]int
	for i := range c {
		c[i] = int(math.Round(lo[i] + (hi[i]-lo[i])*t))
	}
	return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2])
}
