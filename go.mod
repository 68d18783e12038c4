module github.com/cryptvol/cryptvol

go 1.26.8

require (
	github.com/creack/pty v1.1.24
	github.com/diskfs/go-diskfs v1.9.4
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/pflag v1.1.0
	github.com/ulikunitz/xz v0.5.17
	golang.org/x/crypto v0.59.0
	golang.org/x/sys v0.50.0
	golang.org/x/term v0.48.0
)

require (
	github.com/elliotwutingfeng/asciiset v0.0.0-20260129054604-cfde2086bc57 // indirect
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
