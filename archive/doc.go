// Package archive is an encrypted, append-only archive of many small files
// in one file, with a documented format (SPEC.md in this directory).
//
// Adding members appends their encrypted records, then a small encrypted
// index segment and a fixed-size footer; nothing already in the file is
// rewritten, and the order of writes and fsyncs means a crash at any
// instant leaves a file that opens with the old or the new contents. The
// index is read once at Open and held in memory compactly (about 100 bytes
// per member), so reading a member is one lookup and one read, each 64 KiB
// chunk authenticated (AES-256-GCM or XChaCha20-Poly1305, bound to its
// file, offset and position). A password goes through Argon2id; a key file
// through HKDF.
//
//	a, err := archive.Create(ctx, "thumbs.cva", archive.Credentials{Password: pw}, nil)
//	...
//	err = a.Add("img/0001.jpg", f, archive.Info{ModTime: mtime, Mode: 0o644}, nil)
//	err = a.Commit()                   // durable: the archive now holds it
//	data, err := a.ReadFile("img/0001.jpg")
//	m, err := a.Open("big.mov")        // an io.ReadSeeker, streamed
//	err = a.Walk(func(e archive.Entry, data []byte) error { ... }) // all, in 4 MiB reads
//	err = a.Remove("img/0001.jpg")     // then Commit; Compact reclaims space
//
// Local files come in and go out as tar would have them: Sources and
// AddSources add paths (directories with everything under them) in one
// commit; Select and ExtractAll write members below a directory, keeping
// nothing that does not authenticate. The reports (Report, RepairPlan,
// RepairReport, TailReport) write themselves as text (describe.go).
//
// Package archivebench measures it against plain files and zip; the
// `cryptvol archive` and `cryptvol benchmark archive` commands use both.
package archive
