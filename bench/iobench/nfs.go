package iobench

import (
	"context"
	"fmt"
	"os"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/diskio"
	"github.com/cryptvol/cryptvol/serve/nfs"
	"github.com/cryptvol/cryptvol/volume"
)

// nfsPass serves the volume's files as 'cryptvol serve --nfs' does
// (package serve/nfs, loopback) and moves one file through it with an
// NFSv3 client in this process (go-nfs-client, over one TCP connection
// to the serve's single port for MOUNT and NFS): WRITEs of the whole
// file, each answered FILE_SYNC after the filesystem is synced, as a
// client's are, then READs after the container is dropped from the page
// cache.
func nfsPass(ctx context.Context, o Options, v *volume.Volume, container *os.File, blocks *blockSource) (Speed, error) {
	var s Speed
	fsys, err := filesystem.OpenAs("vfat", v, v.Size(), filesystem.Options{Writable: true})
	if err != nil {
		return s, err
	}
	defer fsys.Close()
	srv, err := nfs.Start(fsys, nfs.Config{})
	if err != nil {
		return s, err
	}
	defer srv.Shutdown(context.Background())
	target, closeTarget, err := dialNFS(srv.Addr, srv.Export)
	if err != nil {
		return s, err
	}
	defer closeTarget()

	start := time.Now()
	f, err := target.OpenFile("/bench.bin", 0o644)
	if err != nil {
		return s, fmt.Errorf("NFS CREATE: %w", err)
	}
	w := &blockReader{blocks: blocks, size: o.Size}
	buf := make([]byte, o.BlockSize)
	for w.off < o.Size {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		n, _ := w.Read(buf)
		if _, err := f.Write(buf[:n]); err != nil {
			return s, fmt.Errorf("NFS WRITE at %d: %w", w.off, err)
		}
	}
	if err := f.Close(); err != nil { // COMMIT
		return s, fmt.Errorf("NFS COMMIT: %w", err)
	}
	s.WriteBPS = float64(o.Size) / time.Since(start).Seconds()

	diskio.DropCache(container)
	start = time.Now()
	r, err := target.Open("/bench.bin")
	if err != nil {
		return s, fmt.Errorf("NFS LOOKUP: %w", err)
	}
	if err := checkStream(r, o.Size, blocks); err != nil {
		return s, err
	}
	s.ReadBPS = float64(o.Size) / time.Since(start).Seconds()
	return s, nil
}

// dialNFS mounts export of the serve at addr, MOUNT and NFS on one
// connection (the serve has no portmapper), as the client the serve's
// help tells users to use would.
func dialNFS(addr, export string) (*nfsc.Target, func(), error) {
	c, err := rpc.DialTCP("tcp", addr, false)
	if err != nil {
		return nil, nil, err
	}
	m := &nfsc.Mount{Client: c}
	target, err := m.Mount(export, rpc.AuthNull)
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("NFS MOUNT of %s: %w", export, err)
	}
	return target, func() { m.Unmount(); c.Close() }, nil
}
