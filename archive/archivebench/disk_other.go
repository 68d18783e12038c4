//go:build !unix

package archivebench

import "os"

func diskBytes(fi os.FileInfo) (int64, bool) { return fi.Size(), false }
