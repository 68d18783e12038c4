// Package chart draws benchmark results as SVG charts and self-contained
// HTML reports, and lines several runs up against each other (`cryptvol
// benchmark compare`): bars of Encrypt/Decrypt/Mean per cipher, a hash ×
// encryption heat map of volume creation speed, unlock time per PRF, and
// raw against encrypted disk I/O.
//
// Input is what `cryptvol benchmark ... --format json` prints (Parse tells
// the kind from its fields), or an HTML report, which embeds the JSON it
// was drawn from in a <script type="application/json"> element so that it
// can be read again and compared.
//
// # Why the drawing is our own
//
// gonum.org/v1/plot (v0.17.0) was tried first, as the issue suggested. It
// draws well, but it lays text out itself and so links its Liberation
// fonts into every program that imports it, and its plot package pulls in
// the PDF, EPS and raster back ends unless built with -tags minimal: the
// static cryptvol binary grew from 10.2 MB to 16.6 MB (15.7 MB minimal),
// 60% more to ship to every Raspberry Pi for a feature most runs never
// use. SVG needs none of that: the viewer lays the text out (text-anchor,
// font-family), so bars, ticks and labels are a few hundred lines of
// rectangles and text over encoding/xml's escaping. Every bar and cell
// carries data-* attributes (series, category, value) so tests can check
// the chart against the numbers rather than against pixels.
//
// # No network
//
// The HTML report is one file: styles inline, SVG inline, no scripts that
// run, no web fonts (a system font stack), and a Content-Security-Policy
// of default-src 'none' so that a browser would refuse any fetch even if
// the page asked for one.
package chart
