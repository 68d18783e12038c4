package repocheck

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// generatedRE is Go's convention for a generated file (go help generate,
// go/ast.IsGenerated): a line of its own, flush left, before the first
// line that is not a comment. Tools (gopls, linters, code review) skip
// only files that carry it exactly.
var generatedRE = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// header returns the leading lines of a source file that are comments or
// blank, where Go looks for the marker.
func header(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if trimmed != "" && !strings.HasPrefix(trimmed, "//") {
			break
		}
		lines = append(lines, line)
	}
	return lines
}

func hasMarker(lines []string) bool {
	for _, l := range lines {
		if generatedRE.MatchString(l) {
			return true
		}
	}
	return false
}

// TestGeneratedMarkersExact: every tracked Go or assembly file whose
// header says it is generated says so in exactly Go's form (an indented
// or reworded marker is invisible to tools).
func TestGeneratedMarkersExact(t *testing.T) {
	n := 0
	for _, file := range trackedFiles(t) {
		if !strings.HasSuffix(file, ".go") && !strings.HasSuffix(file, ".s") {
			continue
		}
		lines := header(t, file)
		claims := false
		for _, l := range lines {
			if strings.Contains(l, "Code generated") || strings.Contains(l, "DO NOT EDIT") {
				claims = true
			}
		}
		if !claims {
			continue
		}
		n++
		if !hasMarker(lines) {
			t.Errorf("%s: its generated-file line does not match %s", file, generatedRE)
		}
	}
	if n == 0 {
		t.Fatal("found no generated file at all; the scan is broken")
	}
}

// TestGeneratorsWriteMarker: every file a //go:generate directive
// writes exists and carries the marker, so a new generator cannot add
// a file tools take for hand-written code.
func TestGeneratorsWriteMarker(t *testing.T) {
	dirs := 0
	for _, file := range trackedFiles(t) {
		if !strings.HasSuffix(file, ".go") {
			continue
		}
		for _, d := range directives(t, file) {
			dirs++
			outs := generatorOutputs(t, path.Dir(file), d)
			t.Logf("%s: %q writes %v", file, d, outs)
			if len(outs) == 0 {
				t.Errorf("%s: cannot tell which files %q writes; teach generatorOutputs", file, d)
			}
			for _, out := range outs {
				matches, _ := filepath.Glob(filepath.Join(repoRoot, out))
				if len(matches) == 0 {
					t.Errorf("%s: %q should write %s, which does not exist", file, d, out)
				}
				for _, m := range matches {
					rel, _ := filepath.Rel(repoRoot, m)
					if !hasMarker(header(t, rel)) {
						t.Errorf("%s (written by %q in %s) lacks a line matching %s", rel, d, file, generatedRE)
					}
				}
			}
		}
	}
	if dirs == 0 {
		t.Fatal("found no //go:generate directive; the scan is broken")
	}
}

// directives returns the commands of the //go:generate lines of a file.
func directives(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var ds []string
	for _, line := range strings.Split(string(src), "\n") {
		if cmd, ok := strings.CutPrefix(line, "//go:generate "); ok {
			ds = append(ds, strings.TrimSpace(cmd))
		}
	}
	return ds
}

// generatorOutputs names (as globs relative to the module root) the
// files a directive in dir writes: the arguments of -out, -stubs and a
// shell redirection, and the names a "go run" generator passes to
// os.WriteFile or os.Create.
func generatorOutputs(t *testing.T, dir, directive string) []string {
	var outs []string
	words := strings.Fields(strings.NewReplacer(`"`, " ", "&&", " && ").Replace(directive))
	cwd := dir
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "cd" && i+1 < len(words):
			cwd = path.Join(cwd, words[i+1])
			i++
		case (w == "-out" || w == "-stubs" || w == ">") && i+1 < len(words):
			outs = append(outs, path.Join(cwd, words[i+1]))
			i++
		case w == "run" && i > 0 && words[i-1] == "go":
			var srcs []string
			for j := i + 1; j < len(words) && !strings.HasPrefix(words[j], "-") && words[j] != "&&" && words[j] != ">"; j++ {
				srcs = append(srcs, words[j])
			}
			if hasFlagOutput(words[i:]) {
				continue // named by -out and -stubs above
			}
			for _, s := range srcs {
				outs = append(outs, writtenNames(t, cwd, s)...)
			}
		}
	}
	return outs
}

// hasFlagOutput reports whether a "go run" command (up to the next &&)
// names its output with -out.
func hasFlagOutput(words []string) bool {
	for _, w := range words {
		if w == "&&" {
			return false
		}
		if w == "-out" {
			return true
		}
	}
	return false
}

// writtenNames parses a generator (one .go file or a package directory)
// and returns the files it writes, relative to the module root, as
// globs: parts of a name computed at run time become "*".
func writtenNames(t *testing.T, cwd, src string) []string {
	t.Helper()
	var files []string
	if strings.HasSuffix(src, ".go") {
		files = []string{path.Join(cwd, src)}
	} else {
		m, _ := filepath.Glob(filepath.Join(repoRoot, cwd, src, "*.go"))
		for _, f := range m {
			rel, _ := filepath.Rel(repoRoot, f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	var outs []string
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, filepath.Join(repoRoot, f), nil, 0)
		if err != nil {
			t.Fatalf("parsing generator %s: %v", f, err)
		}
		assigned := map[string]ast.Expr{}
		ast.Inspect(af, func(n ast.Node) bool {
			if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
				for i, l := range as.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						assigned[id.Name] = as.Rhs[i]
					}
				}
			}
			return true
		})
		ast.Inspect(af, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "os" || (sel.Sel.Name != "WriteFile" && sel.Sel.Name != "Create") {
				return true
			}
			if name := globOf(call.Args[0], assigned); name != "" {
				outs = append(outs, path.Join(cwd, name))
			}
			return true
		})
	}
	return outs
}

// globOf renders a file-name expression as a glob: string literals as
// they are, anything else as "*", a variable by what it was assigned.
func globOf(e ast.Expr, assigned map[string]ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if s, err := strconv.Unquote(e.Value); err == nil {
			return s
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return collapse(globOf(e.X, assigned) + globOf(e.Y, assigned))
		}
	case *ast.Ident:
		if v, ok := assigned[e.Name]; ok {
			delete(assigned, e.Name) // no loops through self-reference
			return globOf(v, assigned)
		}
	}
	return "*"
}

func collapse(s string) string {
	for strings.Contains(s, "**") {
		s = strings.ReplaceAll(s, "**", "*")
	}
	return s
}
