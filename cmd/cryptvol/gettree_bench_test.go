package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/filesystem/fsops"
	"github.com/cryptvol/cryptvol/internal/fstree"
	"github.com/cryptvol/cryptvol/volume"
	"github.com/cryptvol/cryptvol/volume/tcrypt"
)

// BenchmarkGetTree copies 1,000 files of 3-10 KB out of an ext4 and an
// NTFS filesystem inside a VeraCrypt volume (AES, a container file on
// this disk) with `cryptvol get -r` run in process, and the same files
// from a plain directory on the same disk (read, write, set the time:
// what cp -p does), alternating in the same run. x-plain-dir is the ratio
// (the goal is at most 3); x-same-writer compares with get -r's own copy
// loop reading the plain directory (so only the volume and the filesystem
// reader differ). The volume's key derivation is measured apart and left
// out, as in BenchmarkSmallFilesInVolume.
//
//	go test -run XXX -bench GetTree ./cmd/cryptvol
func BenchmarkGetTree(b *testing.B) {
	dir := b.TempDir()
	src := smallFiles(b, dir)
	for _, kind := range []string{"ext4", "ntfs"} {
		b.Run(kind, func(b *testing.B) {
			img := filepath.Join(dir, kind+".img")
			switch kind {
			case "ext4":
				if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-d", filepath.Dir(src), img, "32M").CombinedOutput(); err != nil {
					b.Skipf("mkfs.ext4: %v %s", err, out)
				}
			case "ntfs":
				fstree.MakeNTFS(b, img, filepath.Dir(src), 32<<20, nil, false)
			}
			vol := filepath.Join(dir, kind+".hc")
			creds := volume.Credentials{Password: []byte("bench"), PIM: 1}
			if err := createFile(nil, vol, 34<<20, func(dev *volume.FileDevice) error {
				_, err := tcrypt.Create(context.Background(), dev, creds, tcrypt.CreateOptions{Quick: true})
				return err
			}); err != nil {
				b.Fatal(err)
			}
			imgData, err := os.ReadFile(img)
			if err != nil {
				b.Fatal(err)
			}
			v, err := volume.OpenWith(context.Background(), vol, creds, volume.Options{Hash: "SHA-512"})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := v.WriteAt(imgData, 0); err != nil {
				b.Fatal(err)
			}
			v.Close()
			pw := filepath.Join(dir, "pw")
			os.WriteFile(pw, []byte("bench\n"), 0o600)
			var inVol, plain, same, open time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				v, err := volume.OpenWith(context.Background(), vol, creds, volume.Options{Hash: "SHA-512", ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				v.Close()
				open += time.Since(start)

				out := filepath.Join(dir, fmt.Sprintf("%s-out%d", kind, i))
				start = time.Now()
				if code, _, errOut := runCLI("get", vol, "/files", out, "-r", "--password-file", pw, "--pim", "1", "--hash", "SHA-512", "--encryption", "AES"); code != 0 {
					b.Fatalf("get -r: exit %d: %s", code, errOut)
				}
				inVol += time.Since(start)

				pd := filepath.Join(dir, fmt.Sprintf("%s-plain%d", kind, i))
				start = time.Now()
				if err := copyPlain(src, pd); err != nil {
					b.Fatal(err)
				}
				plain += time.Since(start)

				sd := filepath.Join(dir, fmt.Sprintf("%s-same%d", kind, i))
				start = time.Now()
				ga := &app{stderr: io.Discard}
				lfs := localFS(filepath.Dir(src))
				st, err := lfs.Stat("/files")
				if err != nil {
					b.Fatal(err)
				}
				if err := fsops.Get(context.Background(), lfs, "/files", st, sd, getOptions(ga, true, false)); err != nil {
					b.Fatal(err)
				}
				same += time.Since(start)
				b.StopTimer()
				os.RemoveAll(out)
				os.RemoveAll(pd)
				os.RemoveAll(sd)
				b.StartTimer()
			}
			inVol -= open
			b.ReportMetric(inVol.Seconds()/float64(b.N), "volume-s")
			b.ReportMetric(plain.Seconds()/float64(b.N), "plain-s")
			b.ReportMetric(open.Seconds()/float64(b.N), "unlock-s")
			b.ReportMetric(float64(inVol)/float64(plain), "x-plain-dir")
			b.ReportMetric(float64(inVol)/float64(same), "x-same-writer")
		})
	}
}

// smallFiles writes the benchmarks' 1,000 files of 3-10 KB (the same
// every run) into dir/src/files and returns that directory.
func smallFiles(b *testing.B, dir string) string {
	src := filepath.Join(dir, "src", "files")
	os.MkdirAll(src, 0o755)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 1000; i++ {
		data := make([]byte, 3000+rng.Intn(7001))
		rng.Read(data)
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%04d.jpg", i)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return src
}

// copyPlain copies the files of src into a new directory dst, with their
// modification times.
func copyPlain(src, dst string) error {
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		p := filepath.Join(dst, e.Name())
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
			return err
		}
	}
	return nil
}

// localFS is a plain directory behind filesystem.FS, for the reference.
type localFS string

func (l localFS) p(name string) string                    { return filepath.Join(string(l), filepath.FromSlash(name)) }
func (l localFS) Type() string                            { return "local" }
func (l localFS) Version() string                         { return "" }
func (l localFS) Label() string                           { return "" }
func (l localFS) ID() string                              { return "" }
func (l localFS) Stat(n string) (fs.FileInfo, error)      { return os.Stat(l.p(n)) }
func (l localFS) Lstat(n string) (fs.FileInfo, error)     { return os.Lstat(l.p(n)) }
func (l localFS) ReadDir(n string) ([]fs.DirEntry, error) { return os.ReadDir(l.p(n)) }
func (l localFS) Open(n string) (filesystem.File, error)  { return os.Open(l.p(n)) }
func (l localFS) Readlink(n string) (string, error)       { return os.Readlink(l.p(n)) }
func (l localFS) Statfs() filesystem.Statfs               { return filesystem.Statfs{} }
func (l localFS) Close() error                            { return nil }
