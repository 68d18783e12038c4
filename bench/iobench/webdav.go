package iobench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/cryptvol/cryptvol/filesystem"
	"github.com/cryptvol/cryptvol/internal/diskio"
	"github.com/cryptvol/cryptvol/serve/webdav"
	"github.com/cryptvol/cryptvol/volume"
)

// webdavPass serves the volume's files as 'cryptvol serve --webdav' does
// (package serve/webdav, loopback) and moves one file through it with an
// HTTP client: a PUT of the whole file, timed until the server has
// answered (it answers after the file is written and closed) and the
// filesystem is synced, then a GET after the container is dropped from
// the page cache.
func webdavPass(ctx context.Context, o Options, v *volume.Volume, container *os.File, blocks *blockSource) (Speed, error) {
	var s Speed
	fsys, err := filesystem.OpenAs("vfat", v, v.Size(), filesystem.Options{Writable: true})
	if err != nil {
		return s, err
	}
	defer fsys.Close()
	srv, err := webdav.Start(fsys, webdav.Config{})
	if err != nil {
		return s, err
	}
	defer srv.Shutdown(context.Background())
	url := srv.URL + "bench.bin"
	client := &http.Client{}

	start := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, &blockReader{blocks: blocks, size: o.Size})
	if err != nil {
		return s, err
	}
	req.ContentLength = o.Size
	req.SetBasicAuth(srv.User, srv.Password)
	resp, err := client.Do(req)
	if err != nil {
		return s, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return s, fmt.Errorf("WebDAV PUT: %s", resp.Status)
	}
	// Timed up to the sync, as the raw pass's fsync is.
	if err := fsys.(filesystem.Writer).Sync(); err != nil {
		return s, err
	}
	s.WriteBPS = float64(o.Size) / time.Since(start).Seconds()

	diskio.DropCache(container)
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return s, err
	}
	req.SetBasicAuth(srv.User, srv.Password)
	start = time.Now()
	resp, err = client.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("WebDAV GET: %s", resp.Status)
	}
	if err := checkStream(resp.Body, o.Size, blocks); err != nil {
		return s, err
	}
	s.ReadBPS = float64(o.Size) / time.Since(start).Seconds()
	return s, nil
}

// blockReader streams the blocks a pass writes, as the body of a PUT.
type blockReader struct {
	blocks *blockSource
	size   int64
	off    int64
}

func (r *blockReader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	bs := int64(r.blocks.bs)
	i, in := r.off/bs, r.off%bs
	b := r.blocks.block(i)[in:]
	if rest := r.size - r.off; int64(len(b)) > rest {
		b = b[:rest]
	}
	n := copy(p, b)
	r.off += int64(n)
	return n, nil
}

// checkStream reads size bytes from body and compares them with what was
// written.
func checkStream(body io.Reader, size int64, blocks *blockSource) error {
	want := &blockReader{blocks: blocks, size: size}
	buf, ref := make([]byte, blocks.bs), make([]byte, blocks.bs)
	var got int64
	for got < size {
		n, err := io.ReadFull(body, buf[:min(int64(len(buf)), size-got)])
		if _, werr := io.ReadFull(want, ref[:n]); werr != nil {
			return werr
		}
		if !bytes.Equal(buf[:n], ref[:n]) {
			return fmt.Errorf("read back different data from what was written (at byte %d)", got)
		}
		got += int64(n)
		if err != nil {
			return fmt.Errorf("WebDAV GET after %d of %d bytes: %w", got, size, err)
		}
	}
	return nil
}
