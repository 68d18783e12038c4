package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cryptvol/cryptvol/internal/fstree"
	"github.com/cryptvol/cryptvol/volume"
)

// scriptT lets the fstree helpers run inside a testscript command.
type scriptT struct{ ts *testscript.TestScript }

func (s scriptT) Helper()                   {}
func (s scriptT) Fatalf(f string, a ...any) { s.ts.Fatalf(f, a...) }
func (s scriptT) Skipf(f string, a ...any)  { s.ts.Fatalf("cannot run here: "+f, a...) }
func (s scriptT) Cleanup(fn func())         { s.ts.Defer(fn) }
func (s scriptT) TempDir() string           { return tempDir(s.ts) }
func tempDir(ts *testscript.TestScript) string {
	d, err := os.MkdirTemp(ts.Getenv("WORK"), "tmp")
	ts.Check(err)
	return d
}

// fsImageCmds are the script commands that build filesystem images from a
// test tree and put them into volumes:
//
//	mktree DIR [MANY]            a tree of every kind of file (fstree.Build)
//	mkntfs SRC IMG SIZE          an NTFS image filled from SRC through ntfs-3g
//	mkexfat SRC IMG SIZE         an exFAT image filled from SRC through exfat-fuse
//	cmpexfat IMG SRC RES         exfat-fuse reads SRC's tree out of IMG
//	writeimage VOL PWFILE IMG [PIM]  IMG into VOL's data area (the volume API)
//	cmptree SRC OUT RES [IGNORE...]  OUT is what get -r made of SRC
var fsImageCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"mktree": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 {
			ts.Fatalf("usage: mktree DIR [MANY]")
		}
		many := 50
		if len(args) > 1 {
			fmt.Sscan(args[1], &many)
		}
		dir := ts.MkAbs(args[0])
		ts.Check(os.MkdirAll(dir, 0o755))
		fstree.Build(scriptT{ts}, dir, fstree.Spec{ManyFiles: many, LargeSize: 1 << 20, SparseTail: 3 << 20, Links: true})
	},
	"mkntfs": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: mkntfs SRC IMG SIZE")
		}
		size, err := parseSize(args[2])
		ts.Check(err)
		fstree.MakeNTFS(scriptT{ts}, ts.MkAbs(args[1]), ts.MkAbs(args[0]), size, nil, true)
	},
	"mkexfat": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: mkexfat SRC IMG SIZE")
		}
		size, err := parseSize(args[2])
		ts.Check(err)
		fstree.MakeExFAT(scriptT{ts}, ts.MkAbs(args[1]), ts.MkAbs(args[0]), size)
	},
	"cmpexfat": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: cmpexfat IMG SRC RES")
		}
		res, err := time.ParseDuration(args[2])
		ts.Check(err)
		mnt, unmount := fstree.ExFATFuse(scriptT{ts}, ts.MkAbs(args[0]), true)
		d := fstree.DiffDirs(ts.MkAbs(args[1]), mnt, res, nil)
		unmount()
		if d != "" {
			ts.Fatalf("exfat-fuse reads a different tree:\n%s", d)
		}
	},
	"writeimage": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 && len(args) != 4 {
			ts.Fatalf("usage: writeimage VOL PWFILE IMG [PIM]")
		}
		pim := 0
		if len(args) == 4 {
			fmt.Sscan(args[3], &pim)
		}
		pw, err := os.ReadFile(ts.MkAbs(args[1]))
		ts.Check(err)
		img, err := os.ReadFile(ts.MkAbs(args[2]))
		ts.Check(err)
		v, err := volume.OpenWith(context.Background(), ts.MkAbs(args[0]),
			volume.Credentials{Password: []byte(strings.TrimRight(string(pw), "\r\n")), PIM: pim}, volume.Options{})
		ts.Check(err)
		if int64(len(img)) > v.Size() {
			v.Close()
			ts.Fatalf("image of %d bytes, data area of %d", len(img), v.Size())
		}
		_, err = v.WriteAt(img, 0)
		ts.Check(err)
		ts.Check(v.Close())
	},
	"cmptree": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 3 {
			ts.Fatalf("usage: cmptree SRC OUT RES [IGNORE...]")
		}
		res, err := time.ParseDuration(args[2])
		ts.Check(err)
		if d := fstree.DiffDirs(ts.MkAbs(args[0]), ts.MkAbs(args[1]), res, args[3:]); d != "" {
			ts.Fatalf("trees differ:\n%s", d)
		}
	},
}
