module github.com/cryptvol/cryptvol/ciphers/serpent/_asm

go 1.26.8

require github.com/mmcloughlin/avo v0.5.0

require (
	golang.org/x/mod v0.21.0 // indirect
	golang.org/x/sync v0.8.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)

require github.com/cryptvol/cryptvol v0.0.0

replace github.com/cryptvol/cryptvol => ../../..
