package repocheck

import (
	"sort"
	"strings"
	"testing"
)

// layers are the import layers of docs/ARCHITECTURE.md ("Import
// layering"), lowest first. A pattern is a package or, ending in "/...",
// the packages below a directory; the longest pattern that matches a
// package decides its layer. A package may import only packages of its
// own layer or lower ones.
var layers = [][]string{
	{"internal/progress", "internal/ctxio", "internal/atomicfile", "internal/cputime", "internal/stats", "internal/diskio",
		"internal/filelock", "internal/oracle", "internal/crossarch", "internal/repocheck", "internal/crashsim"}, // 0 support
	{"ciphers", "ciphers/...", "hashes", "hashes/..."}, // 1 primitives
	{"kdf", "kdf/..."},                // 2 key derivation
	{"sector"},                        // 3 sector modes
	{"volume", "volume/internal/..."}, // 4 the volume contract
	{"volume/tcrypt", "volume/luks", "volume/bitlk", "volume/fvault2", "volume/all", "archive", "opensslenc"}, // 5 formats
	{"volume/reencrypt"}, // 6 operations on volumes
	{"fsprobe", "internal/fspath", "internal/fatcore", "fat", "exfat", "ext4", "ntfs", "filesystem", "filesystem/conformance", "filesystem/fsops", "filesystem/external", "internal/fstree", "internal/fattest", "resize"}, // 7 filesystems (resize: a container with its filesystem)
	{"cmd/...", "mount", "bench", "bench/...", "archive/archivebench", "opensslenc/encbench",
		"internal/keep", "internal/selftest", "internal/cmd/...",
		"internal/platform", "internal/fserrno", "mount/cgofs", "serve/..."}, // 8 front ends and tools (platform reports the code paths the layers below chose)
}

// layeringExceptions are today's imports that run against the layers,
// each with why it is still there. The list may only shrink:
// TestLayering fails on an entry that is no longer needed.
var layeringExceptions = map[string]string{
	// StartEncrypt refuses to encrypt an image whose filesystem reaches
	// into the space the headers need, so it recognises the filesystem
	// (signatures and sizes only; the shrinking itself is the caller's,
	// EncryptOptions.Shrink). Passing the probe in the same way would
	// remove it.
	"volume/reencrypt -> fsprobe": "the room check of StartEncrypt",
}

// frontEndExceptions are imports of a filesystem implementation by a
// front end (cmd/..., mount, serve/..., bench/...), which should see only
// package filesystem (issue 26, item 1: one filesystem.FS with writes).
// It is empty, and should stay so.
var frontEndExceptions = map[string]string{}

// filesystemImplementations are the packages front ends must not import.
var filesystemImplementations = map[string]bool{"fat": true, "exfat": true, "ext4": true, "ntfs": true}

// layerOf returns the layer of a package (relative to the module), or -1.
func layerOf(pkg string) int {
	best, bestLen := -1, -1
	for i, ps := range layers {
		for _, p := range ps {
			dir, isTree := strings.CutSuffix(p, "/...")
			matches := pkg == p || (isTree && strings.HasPrefix(pkg, dir+"/"))
			if matches && len(p) > bestLen {
				best, bestLen = i, len(p)
			}
		}
	}
	return best
}

// moduleImports lists, for every package of the module, the module
// packages its non-test files import.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	deps := map[string][]string{}
	for _, line := range goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], modulePath)
		deps[pkg] = nil
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, modulePath); ok {
				deps[pkg] = append(deps[pkg], rel)
			}
		}
	}
	return deps
}

// TestLayering: every package has a layer, none imports a package of a
// higher layer, and no front end imports a filesystem implementation,
// apart from the listed exceptions, each of which must still be needed.
func TestLayering(t *testing.T) {
	deps := moduleImports(t)
	used := map[string]bool{}
	pkgs := make([]string, 0, len(deps))
	for p := range deps {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		l := layerOf(pkg)
		if l < 0 {
			t.Errorf("package %s has no layer: add it to layers here and in %s", pkg, architectureDoc)
			continue
		}
		for _, imp := range deps[pkg] {
			edge := pkg + " -> " + imp
			if li := layerOf(imp); li > l {
				if _, ok := layeringExceptions[edge]; ok {
					used[edge] = true
				} else {
					t.Errorf("%s: layer %d imports layer %d", edge, l, li)
				}
			}
			if filesystemImplementations[imp] && isFrontEnd(pkg) {
				if _, ok := frontEndExceptions[edge]; ok {
					used[edge] = true
				} else {
					t.Errorf("%s: a front end imports a filesystem implementation; use package filesystem", edge)
				}
			}
		}
	}
	for _, list := range []map[string]string{layeringExceptions, frontEndExceptions} {
		for edge, why := range list {
			if !used[edge] {
				t.Errorf("exception %q (%s) is no longer needed: remove it", edge, why)
			}
		}
	}
}

// TestLayersMatchArchitectureDoc: the layer table of docs/ARCHITECTURE.md
// lists the same patterns, layer by layer, as the test enforces.
func TestLayersMatchArchitectureDoc(t *testing.T) {
	rows := tableRows(section(t, "Import layering"))
	if len(rows) != len(layers) {
		t.Fatalf("%s has %d layers, the test %d", architectureDoc, len(rows), len(layers))
	}
	for i, row := range rows {
		var doc []string
		for _, cell := range strings.Split(row[1], ",") {
			doc = append(doc, strings.Trim(strings.TrimSpace(cell), "`"))
		}
		want := append([]string(nil), layers[i]...)
		sort.Strings(doc)
		sort.Strings(want)
		if strings.Join(doc, " ") != strings.Join(want, " ") {
			t.Errorf("layer %d: %s lists %v, the test %v", i, architectureDoc, doc, want)
		}
	}
}

// isFrontEnd: the packages that reach filesystems through package
// filesystem only.
func isFrontEnd(pkg string) bool {
	for _, p := range []string{"cmd", "mount", "serve", "bench"} {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return true
		}
	}
	return false
}
