package chart

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
)

// machineRows describes a run's machine for the report's header.
func machineRows(r *Run, kind Kind) [][2]string {
	m := r.Machine
	var rows [][2]string
	add := func(k, v string) {
		if v != "" {
			rows = append(rows, [2]string{k, v})
		}
	}
	add("CPU", m.CPU)
	if m.GOOS != "" {
		add("Platform", fmt.Sprintf("%s/%s, %d core(s)", m.GOOS, m.GOARCH, m.Cores))
	}
	switch {
	case len(m.Features) > 0:
		add("CPU features", strings.Join(m.Features, " "))
	case m.GOOS != "":
		// The run names its machine and found no feature to use (the
		// generic code paths): say so rather than leave the row out.
		add("CPU features", "none")
	}
	if len(m.Implementations) > 0 {
		names := make([]string, 0, len(m.Implementations))
		for n := range m.Implementations {
			names = append(names, n)
		}
		sort.Strings(names)
		var paths []string
		for _, n := range names {
			paths = append(paths, n+"="+m.Implementations[n])
		}
		add("Code paths", strings.Join(paths, " "))
	}
	if kind == KindCiphers && m.Buffer > 0 {
		add("Buffer", sizeName(int64(m.Buffer)))
	}
	if m.Threads > 0 && (kind == KindCiphers || kind == KindKDF) {
		add("Threads", fmt.Sprint(m.Threads))
	}
	add("Date", r.Date)
	add("cryptvol", r.Version)
	return rows
}

type htmlSection struct {
	Heading string
	Machine [][2]string
}

type htmlPage struct {
	Title    string
	Sections []htmlSection
	SVG      template.HTML
	Head     []string
	Rows     [][]string
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="cryptvol benchmark">
<title>{{.Title}}</title>
<style>
body { font-family: DejaVu Sans, Liberation Sans, Helvetica, Arial, sans-serif; margin: 24px; color: #111; background: #fff; }
h1 { font-size: 20px; margin: 0 0 12px; }
h2 { font-size: 15px; margin: 16px 0 6px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 2px 14px; font-size: 13px; margin: 0 0 12px; }
dt { color: #555; }
dd { margin: 0; }
.result { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
.figure svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 13px; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e4e4e4; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f4f4f4; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Sections}}{{if .Heading}}<h2>{{.Heading}}</h2>{{end}}
<dl>{{range .Machine}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>{{end}}</dl>
{{end}}<div class="result">
<div class="figure">{{.SVG}}</div>
<table>
<thead><tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table>
</div>
`))

// writePage writes the page with its results JSON last: html/template
// would escape the JSON as a JavaScript string inside <script>, so the
// element is written here, after the template.
func writePage(w io.Writer, p htmlPage, results any) error {
	js, err := json.Marshal(results) // escapes <, > and &: the element cannot end early
	if err != nil {
		return err
	}
	if err := page.Execute(w, p); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "<script type=\"application/json\" id=\"%s\">%s</script>\n</body>\n</html>\n", scriptID, js)
	return err
}

// WriteHTML writes the report of one run: the machine, the chart, the
// table beside it, and the run's JSON embedded so that Parse (and
// `benchmark compare`) can read the report again.
func WriteHTML(w io.Writer, r *Run) error {
	v, err := r.view()
	if err != nil {
		return err
	}
	title := fmt.Sprintf("cryptvol benchmark %s", r.Kind)
	if r.Machine.CPU != "" {
		title += " — " + r.Machine.CPU
	}
	return writePage(w, htmlPage{
		Title:    title,
		Sections: []htmlSection{{Machine: machineRows(r, r.Kind)}},
		SVG:      template.HTML(v.svg),
		Head:     v.table.head,
		Rows:     v.table.rows,
	}, r.envelope())
}

// WriteCompareHTML writes the report of a comparison: each run's machine,
// the chart, the table with the ratios, and every run's JSON embedded.
func WriteCompareHTML(w io.Writer, c *Comparison) error {
	env := envelope{Format: "compare", Kind: c.Kind}
	p := htmlPage{Title: fmt.Sprintf("cryptvol benchmark %s: %s", c.Kind, strings.Join(c.Labels, " vs "))}
	for i, r := range c.Runs {
		e := r.envelope()
		e.Label = c.Labels[i]
		env.Runs = append(env.Runs, e)
		p.Sections = append(p.Sections, htmlSection{Heading: c.Labels[i], Machine: machineRows(r, c.Kind)})
	}
	p.SVG = template.HTML(c.SVG())
	p.Head, p.Rows = c.Table()
	return writePage(w, p, env)
}

// Table returns one run's numbers as the HTML report shows them.
func Table(r *Run) (head []string, rows [][]string, err error) {
	v, err := r.view()
	if err != nil {
		return nil, nil, err
	}
	return v.table.head, v.table.rows, nil
}
