package archive_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cryptvol/cryptvol/archive"
)

func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "thumbs.cva")
	ctx := context.Background()
	// A key file's contents (32 bytes to 1 MiB of random data); a
	// password would be Credentials{Password: ...}.
	cred := archive.Credentials{KeyFile: []byte("0123456789abcdef0123456789abcdef")}

	a, err := archive.Create(ctx, path, cred, nil)
	if err != nil {
		panic(err)
	}
	info := archive.Info{ModTime: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC), Mode: 0o644}
	a.Add("img/1.jpg", strings.NewReader("first thumbnail"), info, nil)
	a.Add("img/2.jpg", strings.NewReader("second thumbnail"), info, nil)
	if err := a.Commit(); err != nil {
		panic(err)
	}
	a.Close()

	a, err = archive.Open(ctx, path, cred, &archive.OpenOptions{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	defer a.Close()
	for _, e := range a.List() {
		data, _ := a.ReadFile(e.Name)
		fmt.Printf("%s %d %q\n", e.Name, e.Size, data)
	}
	// Output:
	// img/1.jpg 15 "first thumbnail"
	// img/2.jpg 16 "second thumbnail"
}
